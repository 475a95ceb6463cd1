package northbound

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func node1() NodeSpec {
	return NodeSpec{Name: "node1", Router: "ovn-cluster", JoinSwitch: "join",
		JoinIP: netip.MustParseAddr("100.64.0.2"), NodeIP: netip.MustParseAddr("192.168.1.10"),
		PodIPs: []netip.Addr{netip.MustParseAddr("10.42.0.5")}}
}

func TestEnsureNode(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := node1()
	f.mustWrite(t, 1, "ensure node", func() error { return f.c.EnsureNode(f.ctx, spec) })
	f.mustWrite(t, 0, "ensure node again", func() error { return f.c.EnsureNode(f.ctx, spec) })

	policies := f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster")
	for _, want := range []string{"31000", "ip4.dst == 192.168.1.10", "29000", "ip4.src == $node1.pods_ip4", "reroute", "100.64.0.2"} {
		if !strings.Contains(policies, want) {
			t.Errorf("lr-policy-list lacks %q:\n%s", want, policies)
		}
	}
	port := f.srv.Run(t, "ovn-nbctl", "lsp-get-addresses", "node-node1")
	if !strings.Contains(port, "0a:58:64:40:00:02 100.64.0.2") {
		t.Errorf("node port addresses = %q", port)
	}
	if got := strings.TrimSpace(f.srv.Run(t, "ovn-nbctl", "get", "Logical_Switch_Port", "node-node1", "options:requested-chassis")); got != `"node1"` && got != "node1" {
		t.Errorf("node port requested-chassis = %s, want node1 (the host's ovn0 binds it, no other chassis)", got)
	}
	// A node port made before the pin gets it in place.
	f.srv.Run(t, "ovn-nbctl", "remove", "Logical_Switch_Port", "node-node1", "options", "requested-chassis")
	f.waitCache(t, "the pin's removal", func() bool { // ovn-nbctl's write reaches the client's cache in its own time
		lsp := &nbdb.LogicalSwitchPort{Name: "node-node1"}
		return f.c.nb.Get(f.ctx, lsp) == nil && lsp.Options["requested-chassis"] == ""
	})
	f.mustWrite(t, 1, "pin the node port", func() error { return f.c.EnsureNode(f.ctx, spec) })
	spec.PodIPs = append(spec.PodIPs, netip.MustParseAddr("10.42.0.6"))
	f.mustWrite(t, 1, "ensure node with another pod", func() error { return f.c.EnsureNode(f.ctx, spec) })
	if set := f.srv.Run(t, "ovn-nbctl", "--bare", "--columns=addresses", "find", "Address_Set", "name=node1.pods_ip4"); !strings.Contains(set, "10.42.0.6") {
		t.Errorf("address set = %q", set)
	}
	if n := strings.Count(f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster"), "reroute"); n != 2 {
		t.Errorf("%d reroute policies after repair, want 2", n)
	}
}

func TestEnsureStaticRouteLeavesForeignRoute(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	f.srv.Run(t, "ovn-nbctl", "lr-route-add", "ovn-cluster", "10.99.0.0/16", "100.64.0.9")
	f.waitCache(t, "the foreign route", func() bool {
		var routes []*nbdb.LogicalRouterStaticRoute
		return f.c.nb.List(f.ctx, &routes) == nil && len(routes) > 0
	})
	owner := OwnerRef{Kind: ovn.KindNode, Name: "node1"}
	foreign := StaticRouteSpec{Router: "ovn-cluster", Prefix: netip.MustParsePrefix("10.99.0.0/16"),
		NextHop: netip.MustParseAddr("100.64.0.2"), Owner: owner}
	if err := f.c.EnsureStaticRoute(f.ctx, foreign); !errors.Is(err, ovn.ErrNotOwned) {
		t.Fatalf("ensure over a foreign route = %v, want ErrNotOwned", err)
	}
	mine := StaticRouteSpec{Router: "ovn-cluster", Prefix: netip.MustParsePrefix("0.0.0.0/0"),
		NextHop: netip.MustParseAddr("100.64.0.2"), SrcIP: true, Owner: owner}
	f.mustWrite(t, 1, "ensure route", func() error { return f.c.EnsureStaticRoute(f.ctx, mine) })
	f.mustWrite(t, 0, "ensure route again", func() error { return f.c.EnsureStaticRoute(f.ctx, mine) })
	mine.NextHop = netip.MustParseAddr("100.64.0.3")
	f.mustWrite(t, 1, "change next hop", func() error { return f.c.EnsureStaticRoute(f.ctx, mine) })
	routes := f.srv.Run(t, "ovn-nbctl", "lr-route-list", "ovn-cluster")
	if !strings.Contains(routes, "100.64.0.9") || !strings.Contains(routes, "100.64.0.3") || strings.Contains(routes, "100.64.0.2") {
		t.Errorf("routes:\n%s", routes)
	}
}

// TestEnsureNodeBeforeItsAddress: a node whose own address is not known yet gets its port
// (with the MAC the IPAM chose) and the pods' reroute, and the policy to its address once it
// is known; a bad MAC is refused and changes nothing.
func TestEnsureNodeBeforeItsAddress(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	spec := node1()
	spec.NodeIP = netip.Addr{}
	spec.MAC = net.HardwareAddr{0x0a, 0x58, 0, 0, 0, 9}
	f.mustWrite(t, 1, "ensure node without its address", func() error { return f.c.EnsureNode(f.ctx, spec) })
	if port := f.srv.Run(t, "ovn-nbctl", "lsp-get-addresses", "node-node1"); !strings.Contains(port, "0a:58:00:00:00:09 100.64.0.2") {
		t.Errorf("node port addresses = %q", port)
	}
	if n := strings.Count(f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster"), "reroute"); n != 1 {
		t.Errorf("%d reroute policies without the node's address, want 1", n)
	}
	bad := spec
	bad.MAC = net.HardwareAddr{0x01, 0, 0, 0, 0, 1}
	f.mustWrite(t, 0, "multicast MAC", func() error {
		if err := f.c.EnsureNode(f.ctx, bad); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("multicast MAC: err = %v, want ErrInvalid", err)
		}
		return nil
	})
	spec.NodeIP = netip.MustParseAddr("192.168.1.10")
	f.mustWrite(t, 1, "ensure node with its address", func() error { return f.c.EnsureNode(f.ctx, spec) })
	if n := strings.Count(f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster"), "reroute"); n != 2 {
		t.Errorf("%d reroute policies with the node's address, want 2", n)
	}
}

func TestBuildersRejectBadInput(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	bad := node1()
	bad.JoinIP = netip.Addr{}
	errs := []error{
		f.c.EnsureNode(f.ctx, bad),
		f.c.EnsureStaticRoute(f.ctx, StaticRouteSpec{Router: "ovn-cluster", Prefix: netip.MustParsePrefix("10.0.0.1/8"),
			NextHop: netip.MustParseAddr("100.64.0.2"), Owner: OwnerRef{Kind: ovn.KindNode, Name: "n"}}),
		f.c.EnsureRouterPolicy(f.ctx, RouterPolicySpec{Router: "ovn-cluster", Priority: 100, Match: "ip4",
			Action: nbdb.LogicalRouterPolicyActionReroute, Owner: OwnerRef{Kind: ovn.KindNode, Name: "n"}}),
		aclGroupErr(f.c.EnsureACLGroup(f.ctx, ACLGroupSpec{Owner: OwnerRef{Kind: ovn.KindNetworkPolicy, Name: "a/b"},
			AddressSets: []AddressSetSpec{{Name: "1bad"}}})),
	}
	for i, err := range errs {
		if !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("case %d: err = %v, want ErrInvalid", i, err)
		}
	}
	if f.c.Stats().Transactions != 2 {
		t.Errorf("bad input wrote: %+v", f.c.Stats())
	}
}

func aclGroupErr(_ ACLGroupResult, err error) error { return err }

// TestEnsureNodeDualStack: against a real ovsdb-server, a dual-stack join switch and node get
// both families' rows in one write each (the IPv6 reroute among them), and a second ensure
// writes nothing.
func TestEnsureNodeDualStack(t *testing.T) {
	f := newFixture(t)
	c := DefaultClusterSpec()
	c.JoinDualCIDR, c.JoinDualGateway = netip.MustParsePrefix("fd00:100:64::/112"), netip.MustParseAddr("fd00:100:64::1")
	f.mustWrite(t, 1, "ensure dual-stack cluster", func() error { return f.c.EnsureCluster(f.ctx, c) })
	f.mustWrite(t, 0, "ensure dual-stack cluster again", func() error { return f.c.EnsureCluster(f.ctx, c) })
	spec := node1()
	spec.JoinIP6 = netip.MustParseAddr("fd00:100:64::2")
	spec.PodIPs = append(spec.PodIPs, netip.MustParseAddr("2001:cafe:42::5"))
	f.mustWrite(t, 1, "ensure node", func() error { return f.c.EnsureNode(f.ctx, spec) })
	f.mustWrite(t, 0, "ensure node again", func() error { return f.c.EnsureNode(f.ctx, spec) })
	policies := f.srv.Run(t, "ovn-nbctl", "lr-policy-list", "ovn-cluster")
	for _, want := range []string{"ip6.src == $node1.pods_ip6", "fd00:100:64::2", "ip4.src == $node1.pods_ip4"} {
		if !strings.Contains(policies, want) {
			t.Errorf("lr-policy-list lacks %q:\n%s", want, policies)
		}
	}
	if lrp := f.srv.Run(t, "ovn-nbctl", "get", "Logical_Router_Port", "ovn-cluster-join", "networks"); !strings.Contains(lrp, "fd00:100:64::1/112") {
		t.Errorf("join router port networks %s", lrp)
	}
}
