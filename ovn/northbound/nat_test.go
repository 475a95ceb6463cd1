package northbound

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// TestExternalPortAndNAT: a Vpc router's external link and its NAT rows against a real
// ovsdb-server: each ensure is one transaction and a repeat writes nothing; a changed chassis
// or logical address is repaired in place; deleting an owner removes exactly its rows.
func TestExternalPortAndNAT(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "ensure cluster", func() error { return f.c.EnsureCluster(f.ctx, DefaultClusterSpec()) })
	f.mustWrite(t, 1, "external switch", func() error {
		return f.c.EnsureSubnet(f.ctx, SubnetSpec{Name: "external", Router: "ovn-cluster",
			CIDR: netip.MustParsePrefix("192.0.2.0/24"), Gateway: netip.MustParseAddr("192.0.2.254")})
	})
	f.mustWrite(t, 1, "vpc router", func() error { return f.c.EnsureVpcRouter(f.ctx, "vpc1") })
	mac, _ := net.ParseMAC("0a:58:c0:00:02:0a")
	ext := ExternalPortSpec{Router: "vpc1", Switch: "external", Network: netip.MustParsePrefix("192.0.2.10/24"), MAC: mac,
		Chassis: []string{"host-1"}, Gateway: netip.MustParseAddr("192.0.2.1"), Owner: OwnerRef{Kind: ovn.KindVpcExternal, Name: "vpc1"}}
	f.mustWrite(t, 1, "external port", func() error { return f.c.EnsureExternalPort(f.ctx, ext) })
	f.mustWrite(t, 0, "external port again", func() error { return f.c.EnsureExternalPort(f.ctx, ext) })
	lrp, _ := f.c.routerPortByName(f.ctx, "vpc1-external")
	if lrp == nil || lrp.MAC != mac.String() || !slices.Equal(lrp.Networks, []string{"192.0.2.10/24"}) {
		t.Fatalf("router port %+v", lrp)
	}
	lsp, _ := f.c.switchPortByName(f.ctx, "external-vpc1")
	if lsp == nil || lsp.Type != "router" || lsp.Options["router-port"] != "vpc1-external" {
		t.Fatalf("switch port %+v", lsp)
	}
	lr, _ := f.c.routerByName(f.ctx, "vpc1")
	routes, _ := byUUID(f.ctx, f.c, lr.StaticRoutes, func(u string) *nbdb.LogicalRouterStaticRoute { return &nbdb.LogicalRouterStaticRoute{UUID: u} })
	if len(routes) != 1 || routes[0].IPPrefix != "0.0.0.0/0" || routes[0].Nexthop != "192.0.2.1" {
		t.Fatalf("routes %+v, want the default route via 192.0.2.1", routes)
	}
	chassis := func(want ...string) {
		t.Helper()
		if got, err := f.gatewayChassis("vpc1-external"); err != nil || !slices.Equal(got, want) {
			t.Fatalf("gateway chassis by priority %v (%v), want %v", got, err, want)
		}
	}
	chassis("host-1")
	ext.Chassis = []string{"host-2"}
	f.mustWrite(t, 1, "external port moved", func() error { return f.c.EnsureExternalPort(f.ctx, ext) })
	chassis("host-2")
	// Failover: every external-gw-nodes host, the first highest; reordered in place.
	ext.Chassis = []string{"host-1", "host-2", "host-3"}
	f.mustWrite(t, 1, "external port on three chassis", func() error { return f.c.EnsureExternalPort(f.ctx, ext) })
	f.mustWrite(t, 0, "three chassis again", func() error { return f.c.EnsureExternalPort(f.ctx, ext) })
	chassis("host-1", "host-2", "host-3")
	ext.Chassis = []string{"host-3", "host-1"}
	f.mustWrite(t, 1, "external port reordered", func() error { return f.c.EnsureExternalPort(f.ctx, ext) })
	chassis("host-3", "host-1")
	var gwcs []*nbdb.GatewayChassis
	if err := f.c.nb.List(f.ctx, &gwcs); err != nil || len(gwcs) != 2 {
		t.Fatalf("%d Gateway_Chassis rows (%v), want 2 (host-2's gone with its reference)", len(gwcs), err)
	}
	for _, bad := range [][]string{{"host-1", "host-1"}, {"host-1", ""}} {
		if err := f.c.EnsureExternalPort(f.ctx, ExternalPortSpec{Router: "vpc1", Switch: "external", Network: ext.Network, MAC: mac, Chassis: bad,
			Gateway: ext.Gateway, Owner: ext.Owner}); err == nil || !strings.Contains(err.Error(), "distinct") {
			t.Fatalf("chassis %q: %v, want refused naming the names", bad, err)
		}
	}
	chassis("host-3", "host-1")

	fip := NATSpec{Router: "vpc1", Type: nbdb.NATTypeDNATAndSNAT, ExternalIP: netip.MustParseAddr("192.0.2.11"),
		LogicalIP: netip.MustParsePrefix("10.0.1.2/32"), LogicalPort: "p1.ns1", ExternalMAC: "0a:58:0a:00:01:02",
		Options: map[string]string{"stateless": "false"}, Owner: OwnerRef{Kind: ovn.KindOvnFip, Name: "fip1"}}
	snat := NATSpec{Router: "vpc1", Type: nbdb.NATTypeSNAT, ExternalIP: netip.MustParseAddr("192.0.2.12"),
		LogicalIP: netip.MustParsePrefix("10.0.1.0/24"), Owner: OwnerRef{Kind: ovn.KindOvnSnatRule, Name: "snat1"}}
	f.mustWrite(t, 1, "fip", func() error { return f.c.EnsureNAT(f.ctx, fip) })
	f.mustWrite(t, 0, "fip again", func() error { return f.c.EnsureNAT(f.ctx, fip) })
	f.mustWrite(t, 1, "snat", func() error { return f.c.EnsureNAT(f.ctx, snat) })
	fip.LogicalIP, fip.LogicalPort = netip.MustParsePrefix("10.0.1.3/32"), "p2.ns1"
	f.mustWrite(t, 1, "fip moved to another pod", func() error { return f.c.EnsureNAT(f.ctx, fip) })
	nats := func() map[string]string {
		lr, _ := f.c.routerByName(f.ctx, "vpc1")
		rows, _ := byUUID(f.ctx, f.c, lr.Nat, func(u string) *nbdb.NAT { return &nbdb.NAT{UUID: u} })
		out := map[string]string{}
		for _, n := range rows {
			out[n.ExternalIDs[ovn.OwnerKey]+" "+string(n.Type)] = n.ExternalIP + "->" + n.LogicalIP
		}
		return out
	}
	if got := nats(); len(got) != 2 || got["fip1 dnat_and_snat"] != "192.0.2.11->10.0.1.3" || got["snat1 snat"] != "192.0.2.12->10.0.1.0/24" {
		t.Fatalf("nat rows %v", got)
	}
	if names, _ := f.c.OwnedNames(f.ctx, ovn.KindOvnFip); !slices.Equal(names, []string{"fip1"}) {
		t.Fatalf("owned fips %v", names)
	}
	if bad := (NATSpec{Router: "vpc1", Type: nbdb.NATTypeDNATAndSNAT, ExternalIP: netip.MustParseAddr("192.0.2.13"),
		LogicalIP: netip.MustParsePrefix("10.0.1.0/24"), Owner: OwnerRef{Kind: ovn.KindOvnFip, Name: "bad"}}); f.c.EnsureNAT(f.ctx, bad) == nil {
		t.Fatal("a dnat_and_snat to a CIDR was accepted")
	}

	if n, err := f.c.DeleteOwned(f.ctx, fip.Owner); err != nil || n != 1 {
		t.Fatalf("delete fip rows: %d, %v", n, err)
	}
	if got := nats(); len(got) != 1 || got["snat1 snat"] == "" {
		t.Fatalf("after the fip's deletion: %v", got)
	}
	if _, err := f.c.DeleteOwned(f.ctx, ext.Owner); err != nil {
		t.Fatal(err)
	}
	lrp, _ = f.c.routerPortByName(f.ctx, "vpc1-external")
	lsp, _ = f.c.switchPortByName(f.ctx, "external-vpc1")
	lr, _ = f.c.routerByName(f.ctx, "vpc1")
	if lrp != nil || lsp != nil || lr == nil || len(lr.StaticRoutes) != 0 || len(lr.Nat) != 1 {
		t.Fatalf("after the external link's deletion: port %v, switch port %v, router %+v", lrp, lsp, lr)
	}
}

// TestDNAT: an OvnDnatRule's load balancer on a router against a real ovsdb-server: one
// transaction, none when repeated, the backend repaired in place, the deletion unhooks it from
// the router and removes it (a strong reference would otherwise refuse the deletion).
func TestDNAT(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "vpc router", func() error { return f.c.EnsureVpcRouter(f.ctx, "vpc1") })
	spec := DNATSpec{Router: "vpc1", Name: "dnat01", Protocol: nbdb.LoadBalancerProtocolTCP,
		VIP: netip.MustParseAddrPort("192.0.2.30:8888"), Backend: netip.MustParseAddrPort("10.0.1.2:80"),
		Owner: OwnerRef{Kind: ovn.KindOvnDnatRule, Name: "dnat01"}}
	f.mustWrite(t, 1, "dnat", func() error { return f.c.EnsureDNAT(f.ctx, spec) })
	f.mustWrite(t, 0, "dnat again", func() error { return f.c.EnsureDNAT(f.ctx, spec) })
	spec.Backend = netip.MustParseAddrPort("10.0.1.3:8080")
	f.mustWrite(t, 1, "dnat to another backend", func() error { return f.c.EnsureDNAT(f.ctx, spec) })
	lb, _ := f.c.loadBalancerByName(f.ctx, "dnat01")
	lr, _ := f.c.routerByName(f.ctx, "vpc1")
	if lb == nil || lb.Vips["192.0.2.30:8888"] != "10.0.1.3:8080" || !slices.Equal(lr.LoadBalancer, []string{lb.UUID}) {
		t.Fatalf("load balancer %+v on router %v", lb, lr.LoadBalancer)
	}
	if n, err := f.c.DeleteDNAT(f.ctx, spec.Owner); err != nil || n != 1 {
		t.Fatalf("delete dnat: %d, %v", n, err)
	}
	lb, _ = f.c.loadBalancerByName(f.ctx, "dnat01")
	lr, _ = f.c.routerByName(f.ctx, "vpc1")
	if lb != nil || len(lr.LoadBalancer) != 0 {
		t.Fatalf("after deletion: load balancer %+v, router's %v", lb, lr.LoadBalancer)
	}
}

// gatewayChassis returns the chassis of the router port's gateway chassis rows by priority,
// the highest first.
func (f fixture) gatewayChassis(port string) ([]string, error) {
	lrp, err := f.c.routerPortByName(f.ctx, port)
	if err != nil || lrp == nil {
		return nil, err
	}
	rows, err := byUUID(f.ctx, f.c, lrp.GatewayChassis, func(u string) *nbdb.GatewayChassis { return &nbdb.GatewayChassis{UUID: u} })
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rows, func(a, b *nbdb.GatewayChassis) int { return b.Priority - a.Priority })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ChassisName
	}
	return out, nil
}
