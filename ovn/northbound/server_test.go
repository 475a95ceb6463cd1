package northbound

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

type fixture struct {
	c   *Client
	srv *ovsdbtest.Server
	ctx context.Context
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Connect(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}, Log: log})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	return fixture{c: c, srv: srv, ctx: ctx}
}

// waitCache waits until the client's cache satisfies cond: a row another client (ovn-nbctl)
// wrote reaches this client's monitor a moment after the command returns.
func (f fixture) waitCache(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-f.ctx.Done():
			t.Fatalf("cache never showed %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// mustWrite runs f and checks how many write transactions it committed.
func (f fixture) mustWrite(t *testing.T, want int64, what string, fn func() error) {
	t.Helper()
	before := f.c.writes.Load()
	if err := fn(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := f.c.writes.Load() - before; got != want {
		t.Fatalf("%s: %d write transactions, want %d", what, got, want)
	}
}

// insertForeign writes rows without edgeovn's tags, as an administrator or another tool would.
func (f fixture) insertForeign(t *testing.T, ops ...[]ovsdb.Operation) {
	t.Helper()
	var all []ovsdb.Operation
	for _, o := range ops {
		all = append(all, o...)
	}
	if err := ovn.Transact(f.ctx, f.c.nb, all); err != nil {
		t.Fatalf("insert foreign rows: %v", err)
	}
}

func (f fixture) create(t *testing.T, m ...model.Model) []ovsdb.Operation {
	t.Helper()
	ops, err := f.c.nb.Create(m...)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

func ensureClusterAndSubnet(t *testing.T, f fixture) SubnetSpec {
	t.Helper()
	f.mustWrite(t, 1, "ensure cluster", func() error { return f.c.EnsureCluster(f.ctx, DefaultClusterSpec()) })
	sub := SubnetSpec{Name: "ovn-default", Router: "ovn-cluster",
		CIDR: netip.MustParsePrefix("10.42.0.0/16"), Gateway: netip.MustParseAddr("10.42.0.1")}
	f.mustWrite(t, 1, "ensure subnet", func() error { return f.c.EnsureSubnet(f.ctx, sub) })
	return sub
}

func TestEnsureClusterAndSubnet(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)

	lr, err := f.c.routerByName(f.ctx, "ovn-cluster")
	if err != nil || lr == nil || len(lr.Ports) != 2 || lr.ExternalIDs[ovn.OwnerKindKey] != ovn.KindCluster {
		t.Fatalf("router = %+v, %v; want owned router with 2 ports", lr, err)
	}
	join, _ := f.c.switchByName(f.ctx, "join")
	if join == nil || join.OtherConfig["subnet"] != "100.64.0.0/16" || !ovn.IsOwned(join.ExternalIDs) {
		t.Fatalf("join switch = %+v", join)
	}
	lrp, _ := f.c.routerPortByName(f.ctx, "ovn-cluster-ovn-default")
	if lrp == nil || lrp.MAC != "0a:58:0a:2a:00:01" || !slices.Equal(lrp.Networks, []string{"10.42.0.1/16"}) {
		t.Fatalf("subnet router port = %+v", lrp)
	}
	lsp, _ := f.c.switchPortByName(f.ctx, "ovn-default-ovn-cluster")
	if lsp == nil || lsp.Type != "router" || lsp.Options["router-port"] != "ovn-cluster-ovn-default" ||
		!slices.Equal(lsp.Addresses, []string{"router"}) || lsp.ExternalIDs[ovn.OwnerKey] != "ovn-default" {
		t.Fatalf("subnet switch port = %+v", lsp)
	}
	// The server, not just our cache, has the topology.
	show := f.srv.Run(t, "ovn-nbctl", "show")
	for _, want := range []string{"router", "ovn-cluster-join", "100.64.0.1/16", "ovn-cluster-ovn-default", "10.42.0.1/16",
		`switch`, "(join)", "(ovn-default)", "join-ovn-cluster"} {
		if !strings.Contains(show, want) {
			t.Errorf("ovn-nbctl show lacks %q:\n%s", want, show)
		}
	}

	f.mustWrite(t, 0, "ensure cluster again", func() error { return f.c.EnsureCluster(f.ctx, DefaultClusterSpec()) })
	f.mustWrite(t, 0, "ensure subnet again", func() error {
		return f.c.EnsureSubnet(f.ctx, SubnetSpec{Name: "ovn-default", Router: "ovn-cluster",
			CIDR: netip.MustParsePrefix("10.42.0.0/16"), Gateway: netip.MustParseAddr("10.42.0.1")})
	})
}

func TestEnsureSubnetRepairsChangedGateway(t *testing.T) {
	f := newFixture(t)
	sub := ensureClusterAndSubnet(t, f)
	before, _ := f.c.routerPortByName(f.ctx, "ovn-cluster-ovn-default")
	sub.Gateway = netip.MustParseAddr("10.42.0.254")
	f.mustWrite(t, 1, "ensure subnet with new gateway", func() error { return f.c.EnsureSubnet(f.ctx, sub) })
	after, _ := f.c.routerPortByName(f.ctx, "ovn-cluster-ovn-default")
	if after.UUID != before.UUID || after.MAC != "0a:58:0a:2a:00:fe" || !slices.Equal(after.Networks, []string{"10.42.0.254/16"}) {
		t.Fatalf("router port after gateway change = %+v (before %+v)", after, before)
	}
	f.mustWrite(t, 0, "ensure subnet again", func() error { return f.c.EnsureSubnet(f.ctx, sub) })
}

func TestEnsureSubnetNeedsRouter(t *testing.T) {
	f := newFixture(t)
	err := f.c.EnsureSubnet(f.ctx, SubnetSpec{Name: "s1", Router: "nope",
		CIDR: netip.MustParsePrefix("10.44.0.0/24"), Gateway: netip.MustParseAddr("10.44.0.1")})
	if !errors.Is(err, ovn.ErrNotFound) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("error = %v, want ErrNotFound naming the router", err)
	}
	if f.c.writes.Load() != 0 {
		t.Fatal("a failed ensure wrote to the database")
	}
}

func podSpec(sw string, ip string) PodPortSpec {
	mac, _ := net.ParseMAC("0a:58:0a:2a:00:05")
	return PodPortSpec{Switch: sw, Name: "web.default", MAC: mac,
		IPs: []netip.Addr{netip.MustParseAddr(ip)}, Owner: "default/web"}
}

func TestEnsurePodPort(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := podSpec("ovn-default", "10.42.0.5")
	f.mustWrite(t, 1, "create pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	lsp, _ := f.c.switchPortByName(f.ctx, "web.default")
	want := []string{"0a:58:0a:2a:00:05 10.42.0.5"}
	if lsp == nil || !slices.Equal(lsp.Addresses, want) || !slices.Equal(lsp.PortSecurity, want) ||
		lsp.ExternalIDs[LogicalSwitchKey] != "ovn-default" || lsp.ExternalIDs[ovn.OwnerKey] != "default/web" ||
		lsp.ExternalIDs[ovn.OwnerKindKey] != ovn.KindPod {
		t.Fatalf("pod port = %+v", lsp)
	}
	f.mustWrite(t, 0, "ensure same pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })

	// Update path: a new address (dual stack) updates the same row.
	spec.IPs = append(spec.IPs, netip.MustParseAddr("fd00::5"))
	f.mustWrite(t, 1, "update pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	updated, _ := f.c.switchPortByName(f.ctx, "web.default")
	if updated.UUID != lsp.UUID || !slices.Equal(updated.Addresses, []string{"0a:58:0a:2a:00:05 10.42.0.5 fd00::5"}) {
		t.Fatalf("updated pod port = %+v", updated)
	}
	f.mustWrite(t, 0, "ensure updated pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })

	got, ok, err := f.c.PodPort(f.ctx, "web.default")
	if err != nil || !ok || got.Switch != "ovn-default" || got.Owner != "default/web" ||
		got.MAC.String() != "0a:58:0a:2a:00:05" || !slices.Equal(got.IPs, spec.IPs) {
		t.Fatalf("PodPort = %+v, %v, %v", got, ok, err)
	}
	all, err := f.c.PodPorts(f.ctx)
	if err != nil || len(all) != 1 || all[0].Name != "web.default" {
		t.Fatalf("PodPorts = %+v, %v (router ports must not be listed)", all, err)
	}
	if _, ok, _ := f.c.PodPort(f.ctx, "ovn-default-ovn-cluster"); ok {
		t.Fatal("PodPort returned a router-type port")
	}
}

// TestEnsurePodPortRequestedChassis: a pod port is pinned to its node's chassis, a port made
// before the pin (an older edgeovn) gets it in place, a re-created pod on another node moves
// it, and an invalid chassis name writes nothing.
func TestEnsurePodPortRequestedChassis(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := podSpec("ovn-default", "10.42.0.5")
	f.mustWrite(t, 1, "create unpinned pod port", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	first, _ := f.c.switchPortByName(f.ctx, "web.default")
	if len(first.Options) != 0 {
		t.Fatalf("unpinned port has options %v", first.Options)
	}
	for _, node := range []string{"edge-1", "edge-2"} {
		spec.Chassis = node
		f.mustWrite(t, 1, "pin to "+node, func() error { return f.c.EnsurePodPort(f.ctx, spec) })
		lsp, _ := f.c.switchPortByName(f.ctx, "web.default")
		if lsp.UUID != first.UUID || lsp.Options[RequestedChassisKey] != node {
			t.Fatalf("pod port after pinning to %s: uuid %s (was %s), options %v", node, lsp.UUID, first.UUID, lsp.Options)
		}
		f.mustWrite(t, 0, "pin again to "+node, func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	}
	spec.Chassis = "bad chassis/name"
	if err := f.c.EnsurePodPort(f.ctx, spec); !errors.Is(err, ovn.ErrInvalid) || !strings.Contains(err.Error(), "chassis") {
		t.Fatalf("invalid chassis: err = %v, want ErrInvalid naming the chassis", err)
	}
	if lsp, _ := f.c.switchPortByName(f.ctx, "web.default"); lsp.Options[RequestedChassisKey] != "edge-2" {
		t.Fatalf("a refused spec changed the port: options %v", lsp.Options)
	}
}

func TestEnsurePodPortMovesBetweenSwitches(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	other := SubnetSpec{Name: "s2", Router: "ovn-cluster",
		CIDR: netip.MustParsePrefix("10.50.0.0/24"), Gateway: netip.MustParseAddr("10.50.0.1")}
	f.mustWrite(t, 1, "ensure subnet s2", func() error { return f.c.EnsureSubnet(f.ctx, other) })
	f.mustWrite(t, 1, "create pod port", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("ovn-default", "10.42.0.5")) })
	f.mustWrite(t, 1, "move pod port", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("s2", "10.50.0.5")) })
	got, ok, err := f.c.PodPort(f.ctx, "web.default")
	if err != nil || !ok || got.Switch != "s2" {
		t.Fatalf("PodPort after move = %+v, %v, %v", got, ok, err)
	}
	old, _ := f.c.switchByName(f.ctx, "ovn-default")
	if len(old.Ports) != 1 {
		t.Fatalf("old switch still has %d ports, want only its router port", len(old.Ports))
	}
	// A late delete for the old switch must not remove the pod's new port.
	f.mustWrite(t, 0, "stale delete", func() error { return f.c.DeletePodPort(f.ctx, "ovn-default", "web.default") })
	if _, ok, _ := f.c.PodPort(f.ctx, "web.default"); !ok {
		t.Fatal("stale delete removed the moved port")
	}
}

func TestDeletePodPortIsIdempotent(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	f.mustWrite(t, 1, "create pod port", func() error { return f.c.EnsurePodPort(f.ctx, podSpec("ovn-default", "10.42.0.5")) })
	f.mustWrite(t, 1, "delete pod port", func() error { return f.c.DeletePodPort(f.ctx, "ovn-default", "web.default") })
	if _, ok, _ := f.c.PodPort(f.ctx, "web.default"); ok {
		t.Fatal("port still there after delete")
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=name", "find", "Logical_Switch_Port", "name=web.default"); strings.TrimSpace(out) != "" {
		t.Fatalf("server still has the port: %q", out)
	}
	f.mustWrite(t, 0, "delete again", func() error { return f.c.DeletePodPort(f.ctx, "ovn-default", "web.default") })
	f.mustWrite(t, 0, "delete on missing switch", func() error { return f.c.DeletePodPort(f.ctx, "gone", "web.default") })
}

func TestForeignRowsUntouched(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	lsp := &nbdb.LogicalSwitchPort{UUID: "p", Name: "admin.port", Addresses: []string{"unknown"}}
	sw := &nbdb.LogicalSwitch{UUID: "s", Name: "admin-net", Ports: []string{"p"}, ExternalIDs: map[string]string{"team": "ops"}}
	f.insertForeign(t, f.create(t, lsp, sw))
	version := f.srv.Run(t, "ovn-nbctl", "list", "Logical_Switch", "admin-net")

	err := f.c.EnsureSubnet(f.ctx, SubnetSpec{Name: "admin-net", Router: "ovn-cluster",
		CIDR: netip.MustParsePrefix("10.60.0.0/24"), Gateway: netip.MustParseAddr("10.60.0.1")})
	if !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("EnsureSubnet over a foreign switch: %v, want ErrNotOwned", err)
	}
	if err := f.c.EnsurePodPort(f.ctx, podSpec("admin-net", "10.60.0.5")); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("EnsurePodPort on a foreign switch: %v, want ErrNotOwned", err)
	}
	spec := podSpec("ovn-default", "10.42.0.9")
	spec.Name = "admin.port"
	if err := f.c.EnsurePodPort(f.ctx, spec); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("EnsurePodPort over a foreign port: %v, want ErrNotOwned", err)
	}
	if err := f.c.DeletePodPort(f.ctx, "admin-net", "admin.port"); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("DeletePodPort of a foreign port: %v, want ErrNotOwned", err)
	}
	if got := f.srv.Run(t, "ovn-nbctl", "list", "Logical_Switch", "admin-net"); got != version {
		t.Errorf("foreign switch changed:\n%s\n->\n%s", version, got)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "lsp-get-addresses", "admin.port"); strings.TrimSpace(out) != "unknown" {
		t.Errorf("foreign port changed: addresses %q", out)
	}
	if ports, _ := f.c.PodPorts(f.ctx); len(ports) != 0 {
		t.Errorf("PodPorts lists foreign ports: %+v", ports)
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	before := f.c.writes.Load()
	bad := map[string]func() error{
		"cluster empty router": func() error {
			s := DefaultClusterSpec()
			s.Router = ""
			return f.c.EnsureCluster(f.ctx, s)
		},
		"cluster gateway outside": func() error {
			s := DefaultClusterSpec()
			s.JoinGateway = netip.MustParseAddr("100.65.0.1")
			return f.c.EnsureCluster(f.ctx, s)
		},
		"subnet invalid prefix": func() error {
			return f.c.EnsureSubnet(f.ctx, SubnetSpec{Name: "x", Router: "ovn-cluster", Gateway: netip.MustParseAddr("10.1.0.1")})
		},
		"subnet gateway outside": func() error {
			return f.c.EnsureSubnet(f.ctx, SubnetSpec{Name: "x", Router: "ovn-cluster",
				CIDR: netip.MustParsePrefix("10.1.0.0/24"), Gateway: netip.MustParseAddr("10.2.0.1")})
		},
		"subnet empty name": func() error {
			return f.c.EnsureSubnet(f.ctx, SubnetSpec{Router: "ovn-cluster",
				CIDR: netip.MustParsePrefix("10.1.0.0/24"), Gateway: netip.MustParseAddr("10.1.0.1")})
		},
		"pod port empty name": func() error {
			s := podSpec("ovn-default", "10.42.0.5")
			s.Name = ""
			return f.c.EnsurePodPort(f.ctx, s)
		},
		"pod port no ip": func() error {
			s := podSpec("ovn-default", "10.42.0.5")
			s.IPs = nil
			return f.c.EnsurePodPort(f.ctx, s)
		},
		"delete empty name": func() error { return f.c.DeletePodPort(f.ctx, "ovn-default", "") },
	}
	for name, fn := range bad {
		if err := fn(); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if f.c.writes.Load() != before {
		t.Fatal("bad input caused a write")
	}
	if err := f.c.EnsurePodPort(f.ctx, podSpec("missing", "10.42.0.5")); !errors.Is(err, ovn.ErrNotFound) {
		t.Errorf("pod port on missing switch: %v, want ErrNotFound", err)
	}
	if ports, _ := f.c.PodPorts(f.ctx); len(ports) != 0 {
		t.Errorf("bad input left pod ports: %+v", ports)
	}
}

// TestStaleCacheCannotDuplicate builds a create from the cache, lets another writer create
// the same port first, and checks that the guarded transaction fails as a conflict.
func TestStaleCacheCannotDuplicate(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := podSpec("ovn-default", "10.42.0.5")
	ops, err := f.c.podPortOps(f.ctx, spec, "new_pod_port")
	if err != nil {
		t.Fatal(err)
	}
	f.mustWrite(t, 1, "concurrent create", func() error { return f.c.EnsurePodPort(f.ctx, spec) })
	if err := f.c.commit(f.ctx, ops); !errors.Is(err, ovn.ErrConflict) {
		t.Fatalf("stale create: %v, want ErrConflict", err)
	}
	if out := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=_uuid", "find", "Logical_Switch_Port", "name=web.default"); len(strings.Fields(out)) != 1 {
		t.Fatalf("want exactly one port, got %q", out)
	}
}

// TestEnsureSubnetDualStack: a dual-stack subnet's router port has both gateways with their
// prefix lengths and its switch both families' other_config; ensured again, nothing is written.
func TestEnsureSubnetDualStack(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "ensure cluster", func() error { return f.c.EnsureCluster(f.ctx, DefaultClusterSpec()) })
	dual := SubnetSpec{Name: "dual", Router: "ovn-cluster", CIDR: netip.MustParsePrefix("10.16.0.0/16"), Gateway: netip.MustParseAddr("10.16.0.1"),
		DualCIDR: netip.MustParsePrefix("fd00:10:16::/64"), DualGateway: netip.MustParseAddr("fd00:10:16::1")}
	f.mustWrite(t, 1, "ensure dual-stack subnet", func() error { return f.c.EnsureSubnet(f.ctx, dual) })
	lrp, _ := f.c.routerPortByName(f.ctx, "ovn-cluster-dual")
	if lrp == nil || !sameSet(lrp.Networks, []string{"10.16.0.1/16", "fd00:10:16::1/64"}) {
		t.Fatalf("dual-stack router port = %+v", lrp)
	}
	ls, _ := f.c.switchByName(f.ctx, "dual")
	if ls == nil || ls.OtherConfig["subnet"] != "10.16.0.0/16" || ls.OtherConfig["ipv6_prefix"] != "fd00:10:16::" {
		t.Fatalf("dual-stack switch = %+v", ls)
	}
	f.mustWrite(t, 0, "ensure dual-stack subnet again", func() error { return f.c.EnsureSubnet(f.ctx, dual) })
}

// DefaultClusterSpec is Kube-OVN's names and join network, as the agent's defaults give them.
func DefaultClusterSpec() ClusterSpec {
	return ClusterSpec{
		Router:      "ovn-cluster",
		JoinSwitch:  "join",
		JoinCIDR:    netip.MustParsePrefix("100.64.0.0/16"),
		JoinGateway: netip.MustParseAddr("100.64.0.1"),
	}
}
