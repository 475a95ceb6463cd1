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

func TestPortGroupACLAddressSetLoadBalancer(t *testing.T) {
	f := newFixture(t)
	sub := ensureClusterAndSubnet(t, f)
	pod := podSpec(sub.Name, "10.42.0.5")
	f.mustWrite(t, 1, "pod port", func() error { return f.c.EnsurePodPort(f.ctx, pod) })
	owner := OwnerRef{Kind: "NetworkPolicy", Name: "default/deny"}
	pg := PortGroupSpec{Name: "default.deny", Ports: []string{pod.Name}, Owner: owner}
	f.mustWrite(t, 1, "port group", func() error { return f.c.EnsurePortGroup(f.ctx, pg) })
	f.mustWrite(t, 0, "port group again", func() error { return f.c.EnsurePortGroup(f.ctx, pg) })
	as := AddressSetSpec{Name: "default.deny.allow", Owner: owner,
		Addresses: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/24"), netip.MustParsePrefix("10.43.0.7/32")}}
	f.mustWrite(t, 1, "address set", func() error { return f.c.EnsureAddressSet(f.ctx, as) })
	f.mustWrite(t, 0, "address set again", func() error { return f.c.EnsureAddressSet(f.ctx, as) })
	acl := ACLSpec{PortGroup: pg.Name, Direction: nbdb.ACLDirectionToLport, Priority: 2000,
		Match: "outport == @default.deny && ip4.src == $default.deny.allow", Action: nbdb.ACLActionAllowRelated, Owner: owner}
	f.mustWrite(t, 1, "acl", func() error { return f.c.EnsureACL(f.ctx, acl) })
	f.mustWrite(t, 0, "acl again", func() error { return f.c.EnsureACL(f.ctx, acl) })
	if out := f.srv.Run(t, "ovn-nbctl", "acl-list", "default.deny"); !strings.Contains(out, "allow-related") {
		t.Errorf("acl-list:\n%s", out)
	}

	lb := LoadBalancerSpec{Name: "svc-web", Protocol: nbdb.LoadBalancerProtocolTCP, Owner: OwnerRef{Kind: "Service", Name: "default/web"},
		VIPs: map[netip.AddrPort][]netip.AddrPort{netip.MustParseAddrPort("10.96.0.10:80"): {
			netip.MustParseAddrPort("10.42.0.5:8080"), netip.MustParseAddrPort("10.42.0.6:8080")}},
		Switches: []string{sub.Name}, Routers: []string{"ovn-cluster"}}
	f.mustWrite(t, 1, "load balancer", func() error { return f.c.EnsureLoadBalancer(f.ctx, lb) })
	f.mustWrite(t, 0, "load balancer again", func() error { return f.c.EnsureLoadBalancer(f.ctx, lb) })
	for _, args := range [][]string{{"ls-lb-list", sub.Name}, {"lr-lb-list", "ovn-cluster"}} {
		if out := f.srv.Run(t, "ovn-nbctl", args...); !strings.Contains(out, "10.42.0.5:8080,10.42.0.6:8080") {
			t.Errorf("%v:\n%s", args, out)
		}
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
		f.c.EnsureAddressSet(f.ctx, AddressSetSpec{Name: "1bad", Owner: OwnerRef{Kind: ovn.KindNode, Name: "n"}}),
		f.c.EnsurePortGroup(f.ctx, PortGroupSpec{Name: "pg", Owner: OwnerRef{}}),
		f.c.EnsureLoadBalancer(f.ctx, LoadBalancerSpec{Name: "lb", Protocol: "icmp", Owner: OwnerRef{Kind: "Service", Name: "a/b"}}),
	}
	for i, err := range errs {
		if !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("case %d: err = %v, want ErrInvalid", i, err)
		}
	}
	if err := f.c.EnsurePortGroup(f.ctx, PortGroupSpec{Name: "pg", Ports: []string{"missing"},
		Owner: OwnerRef{Kind: ovn.KindNode, Name: "n"}}); !errors.Is(err, ovn.ErrNotFound) {
		t.Errorf("port group with a missing port = %v, want ErrNotFound", err)
	}
	if f.c.Stats().Transactions != 2 {
		t.Errorf("bad input wrote: %+v", f.c.Stats())
	}
}

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
