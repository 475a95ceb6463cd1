package northbound

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// Pure tests of the rows the topology ensures want, computed from the specs without a server.

func TestSubnetDesiredRows(t *testing.T) {
	tests := []struct {
		name         string
		spec         SubnetSpec
		routerPort   string
		switchPort   string
		mac, network string
		otherConfig  map[string]string
	}{
		{"ipv4 default subnet",
			SubnetSpec{Name: "ovn-default", Router: "ovn-cluster", CIDR: netip.MustParsePrefix("10.42.0.0/16"), Gateway: netip.MustParseAddr("10.42.0.1")},
			"ovn-cluster-ovn-default", "ovn-default-ovn-cluster", "0a:58:0a:2a:00:01", "10.42.0.1/16",
			map[string]string{"subnet": "10.42.0.0/16"}},
		{"gateway not first address",
			SubnetSpec{Name: "edge", Router: "r1", CIDR: netip.MustParsePrefix("192.168.8.0/24"), Gateway: netip.MustParseAddr("192.168.8.254")},
			"r1-edge", "edge-r1", "0a:58:c0:a8:08:fe", "192.168.8.254/24",
			map[string]string{"subnet": "192.168.8.0/24"}},
		{"ipv6 subnet",
			SubnetSpec{Name: "v6", Router: "ovn-cluster", CIDR: netip.MustParsePrefix("fd00:42::/64"), Gateway: netip.MustParseAddr("fd00:42::1")},
			"ovn-cluster-v6", "v6-ovn-cluster", GatewayMAC(netip.MustParseAddr("fd00:42::1")).String(), "fd00:42::1/64",
			map[string]string{"ipv6_prefix": "fd00:42::"}},
		{"dual stack, as Kube-OVN writes 10.16.0.0/16,fd00:10:16::/64",
			SubnetSpec{Name: "dual", Router: "ovn-cluster", CIDR: netip.MustParsePrefix("10.16.0.0/16"), Gateway: netip.MustParseAddr("10.16.0.1"),
				DualCIDR: netip.MustParsePrefix("fd00:10:16::/64"), DualGateway: netip.MustParseAddr("fd00:10:16::1")},
			"ovn-cluster-dual", "dual-ovn-cluster", "0a:58:0a:10:00:01", "10.16.0.1/16,fd00:10:16::1/64",
			map[string]string{"subnet": "10.16.0.0/16", "ipv6_prefix": "fd00:10:16::"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Fatalf("spec invalid: %v", err)
			}
			a := tt.spec.attachment()
			owner := ovn.OwnedBy(ovn.KindSubnet, tt.spec.Name)
			lrp := a.routerPortRow()
			if lrp.Name != tt.routerPort || lrp.MAC != tt.mac || strings.Join(lrp.Networks, ",") != tt.network || !maps.Equal(lrp.ExternalIDs, owner) {
				t.Errorf("router port = %s %s %v %v, want %s %s [%s] %v", lrp.Name, lrp.MAC, lrp.Networks, lrp.ExternalIDs,
					tt.routerPort, tt.mac, tt.network, owner)
			}
			lsp := a.switchPortRow()
			if lsp.Name != tt.switchPort || lsp.Type != "router" || !slices.Equal(lsp.Addresses, []string{"router"}) ||
				lsp.Options["router-port"] != tt.routerPort || !maps.Equal(lsp.ExternalIDs, owner) {
				t.Errorf("switch port = %+v, want %s of type router peering %s", lsp, tt.switchPort, tt.routerPort)
			}
			if got := switchOtherConfig(a.CIDRs); !maps.Equal(got, tt.otherConfig) {
				t.Errorf("switch other_config = %v, want %v", got, tt.otherConfig)
			}
			if a.CreateRouter {
				t.Error("a subnet must not create the cluster router")
			}
		})
	}
}

// TestSubnetSpecDualStackInvalid: a second CIDR of the first one's family, or without its
// gateway, is refused before anything is read.
func TestSubnetSpecDualStackInvalid(t *testing.T) {
	base := SubnetSpec{Name: "d", Router: "ovn-cluster", CIDR: netip.MustParsePrefix("10.16.0.0/16"), Gateway: netip.MustParseAddr("10.16.0.1")}
	same := base
	same.DualCIDR, same.DualGateway = netip.MustParsePrefix("10.17.0.0/16"), netip.MustParseAddr("10.17.0.1")
	noGW := base
	noGW.DualCIDR = netip.MustParsePrefix("fd00::/64")
	for name, s := range map[string]SubnetSpec{"same family": same, "no gateway": noGW} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: %+v accepted", name, s)
		}
	}
}

func TestClusterDesiredRows(t *testing.T) {
	a := DefaultClusterSpec().attachment()
	lrp, lsp := a.routerPortRow(), a.switchPortRow()
	if !a.CreateRouter || lrp.Name != "ovn-cluster-join" || lsp.Name != "join-ovn-cluster" ||
		lrp.MAC != "0a:58:64:40:00:01" || !slices.Equal(lrp.Networks, []string{"100.64.0.1/16"}) {
		t.Errorf("cluster rows: create router %v, %s %s %v, %s", a.CreateRouter, lrp.Name, lrp.MAC, lrp.Networks, lsp.Name)
	}
	if lrp.ExternalIDs[ovn.OwnerKindKey] != ovn.KindCluster || lrp.ExternalIDs[ovn.OwnerKey] != "ovn-cluster" {
		t.Errorf("cluster router port tags %v", lrp.ExternalIDs)
	}
}

func TestNodeDesiredRows(t *testing.T) {
	tests := []struct {
		name     string
		spec     NodeSpec
		port     string
		address  string
		set      string
		setAddrs []string
	}{
		{"one pod", node1(), "node-node1", "0a:58:64:40:00:02 100.64.0.2", "node1.pods_ip4", []string{"10.42.0.5"}},
		{"dashes become underscores in the set name",
			NodeSpec{Name: "edge-node-2", Router: "ovn-cluster", JoinSwitch: "join",
				JoinIP: netip.MustParseAddr("100.64.0.3"), NodeIP: netip.MustParseAddr("192.168.1.11"),
				PodIPs: []netip.Addr{netip.MustParseAddr("10.42.1.5"), netip.MustParseAddr("10.42.1.6")}},
			"node-edge-node-2", "0a:58:64:40:00:03 100.64.0.3", "edge_node_2.pods_ip4", []string{"10.42.1.5", "10.42.1.6"}},
		{"no pods yet",
			NodeSpec{Name: "n3", Router: "ovn-cluster", JoinSwitch: "join",
				JoinIP: netip.MustParseAddr("100.64.0.4"), NodeIP: netip.MustParseAddr("192.168.1.12")},
			"node-n3", "0a:58:64:40:00:04 100.64.0.4", "n3.pods_ip4", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.spec.Validate(); err != nil {
				t.Fatalf("spec invalid: %v", err)
			}
			owner := ovn.OwnedBy(ovn.KindNode, tt.spec.Name)
			port := tt.spec.joinPortRow()
			if port.Name != tt.port || !slices.Equal(port.Addresses, []string{tt.address}) || !maps.Equal(port.ExternalIDs, owner) {
				t.Errorf("join port = %s %v %v, want %s [%s] %v", port.Name, port.Addresses, port.ExternalIDs, tt.port, tt.address, owner)
			}
			set := tt.spec.addressSet()
			if err := set.Validate(); err != nil {
				t.Errorf("address set invalid: %v", err)
			}
			if set.Name != tt.set || !slices.Equal(set.addresses(), tt.setAddrs) {
				t.Errorf("address set = %s %v, want %s %v", set.Name, set.addresses(), tt.set, tt.setAddrs)
			}
			checkNodePolicies(t, tt.spec, tt.set)
		})
	}
}

func checkNodePolicies(t *testing.T, spec NodeSpec, set string) {
	t.Helper()
	want := []struct {
		priority int
		match    string
	}{
		{NodeRoutePriority, "ip4.dst == " + spec.NodeIP.String()},
		{NodeGatewayPriority, "ip4.src == $" + set},
	}
	got := spec.policies()
	if len(got) != len(want) {
		t.Fatalf("%d policies, want %d", len(got), len(want))
	}
	for i, w := range want {
		p := got[i]
		if err := p.Validate(); err != nil {
			t.Errorf("policy %d invalid: %v", i, err)
		}
		if p.Priority != w.priority || p.Match != w.match || p.Router != spec.Router ||
			p.Action != nbdb.LogicalRouterPolicyActionReroute || !slices.Equal(p.nextHops(), []string{spec.JoinIP.String()}) {
			t.Errorf("policy %d = %+v, want %d %q reroute via %s", i, p, w.priority, w.match, spec.JoinIP)
		}
		if p.Owner.Kind != ovn.KindNode || p.Owner.Name != spec.Name {
			t.Errorf("policy %d owner %+v, want node %s", i, p.Owner, spec.Name)
		}
	}
}

// TestDualStackDesiredRows: a dual-stack join network gives the router port both addresses,
// a node's join port both join IPs, a pod address set and a reroute per family; an IPv6-only
// node has only the IPv6 ones.
func TestDualStackDesiredRows(t *testing.T) {
	c := DefaultClusterSpec()
	c.JoinDualCIDR, c.JoinDualGateway = netip.MustParsePrefix("fd00:100:64::/112"), netip.MustParseAddr("fd00:100:64::1")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if lrp := c.attachment().routerPortRow(); !slices.Equal(lrp.Networks, []string{"100.64.0.1/16", "fd00:100:64::1/112"}) {
		t.Errorf("join router port networks %v", lrp.Networks)
	}
	bad := c
	bad.JoinDualCIDR, bad.JoinDualGateway = netip.MustParsePrefix("100.65.0.0/16"), netip.MustParseAddr("100.65.0.1")
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "of one family") {
		t.Errorf("two IPv4 join CIDRs: %v", err)
	}

	n := node1()
	n.JoinIP6 = netip.MustParseAddr("fd00:100:64::2")
	n.PodIPs = append(n.PodIPs, netip.MustParseAddr("2001:cafe:42::5"))
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := n.joinPortRow().Addresses; !slices.Equal(got, []string{"0a:58:64:40:00:02 100.64.0.2 fd00:100:64::2"}) {
		t.Errorf("join port addresses %v", got)
	}
	var sets []string
	for _, s := range n.addressSets() {
		sets = append(sets, s.Name+fmt.Sprint(s.addresses()))
	}
	if got := strings.Join(sets, " "); got != "node1.pods_ip4[10.42.0.5] node1.pods_ip6[2001:cafe:42::5]" {
		t.Errorf("address sets %s", got)
	}
	var pols []string
	for _, p := range n.policies() {
		pols = append(pols, fmt.Sprint(p.Priority, " ", p.Match, " via ", p.nextHops()))
	}
	want := "31000 ip4.dst == 192.168.1.10 via [100.64.0.2]; 29000 ip4.src == $node1.pods_ip4 via [100.64.0.2]; 29000 ip6.src == $node1.pods_ip6 via [fd00:100:64::2]"
	if got := strings.Join(pols, "; "); got != want {
		t.Errorf("policies\n%s\nwant\n%s", got, want)
	}

	v6 := NodeSpec{Name: "n6", Router: "ovn-cluster", JoinSwitch: "join", JoinIP6: netip.MustParseAddr("fd00:100:64::3"),
		MAC: net.HardwareAddr{0x0a, 0x58, 0, 0, 0, 3}, PodIPs: []netip.Addr{netip.MustParseAddr("2001:cafe:42::6")}}
	if err := v6.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(v6.addressSets()) != 1 || len(v6.policies()) != 1 || v6.policies()[0].Match != "ip6.src == $n6.pods_ip6" {
		t.Errorf("ipv6-only node: sets %v policies %v", v6.addressSets(), v6.policies())
	}
	for want, mut := range map[string]func(*NodeSpec){
		"pod IP \"2001:cafe:42::5\" has no join IP of its family": func(s *NodeSpec) { s.JoinIP6 = netip.Addr{} },
		"join IPv6 \"100.64.0.9\" is not an IPv6 address":         func(s *NodeSpec) { s.JoinIP6 = netip.MustParseAddr("100.64.0.9") },
		"no join IP": func(s *NodeSpec) {
			s.JoinIP, s.JoinIP6, s.NodeIP, s.PodIPs = netip.Addr{}, netip.Addr{}, netip.Addr{}, nil
		},
	} {
		s := n
		mut(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want %q", err, want)
		}
	}
}
