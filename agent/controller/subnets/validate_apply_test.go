package subnets

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// subnetAfter is what a Subnet case expects once its steps ran.
type subnetAfter struct {
	// conds maps Subnet names to their conditions ("TYPE=STATUS REASON"), Unsupported
	// left out.
	conds map[string][]string
	// switches are northbound's logical switches, ipamSubnets the IPAM database's subnets
	// ("subnet NAME CIDR").
	switches, ipamSubnets []string
	// finalizers maps Subnet names to their finalizers, comma-joined.
	finalizers map[string]string
	// nbHas are northbound rows that must be there; no row may begin with one of nbLacks.
	nbHas, nbLacks []string
	// status maps Subnet names to their status.activateGateway.
	status map[string]string
	// events must each be contained in one recorded Event, in order; no other Event may be.
	events []string
}

func (r *rig) check(want subnetAfter) {
	r.t.Helper()
	for name, w := range want.conds {
		got := slices.DeleteFunc(r.conditions(name), func(c string) bool { return strings.HasPrefix(c, kubeovn.ConditionUnsupported) })
		if d := ctltest.Diff(got, w); d != "" {
			r.t.Errorf("subnet %s conditions:%s", name, d)
		}
	}
	for name, w := range want.status {
		u, err := r.dyn.Resource(kubeovn.SubnetResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			r.t.Fatalf("get subnet %s: %v", name, err)
		}
		if got, _, _ := unstructured.NestedString(u.Object, "status", "activateGateway"); got != w {
			r.t.Errorf("subnet %s activateGateway %q, want %q", name, got, w)
		}
	}
	for name, w := range want.finalizers {
		u, err := r.dyn.Resource(kubeovn.SubnetResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			r.t.Fatalf("get subnet %s: %v", name, err)
		}
		if got := strings.Join(u.GetFinalizers(), ","); got != w {
			r.t.Errorf("subnet %s finalizers %q, want %q", name, got, w)
		}
	}
	if d := ctltest.Diff(ctltest.WithPrefix(r.nb.Rows(r.t), "switch "), want.switches); d != "" {
		r.t.Errorf("northbound switches:%s", d)
	}
	if d := ctltest.Diff(ctltest.WithPrefix(r.ipam.Rows(r.ctx, r.t), "subnet "), want.ipamSubnets); d != "" {
		r.t.Errorf("ipam subnets:%s", d)
	}
	r.nb.CheckHas(r.t, want.nbHas)
	for _, row := range r.nb.Rows(r.t) {
		for _, l := range want.nbLacks {
			if strings.HasPrefix(row, l) {
				r.t.Errorf("northbound row %q left", row)
			}
		}
	}
	r.rec.Check(r.t, want.events)
}

var (
	appliedConds = []string{"Ready=True LogicalSwitchReady", "Validated=True ValidateLogicalSwitchSuccess", "Error=False NoError"}
	builtinRows  = []string{"subnet join 100.64.0.0/16", "subnet ovn-default 10.42.0.0/16"}
)

// kubeOVNACLs is the acls of Kube-OVN's Subnet ACL example (guide/subnet).
var kubeOVNACLs = []kubeovn.ACL{
	{Action: "drop", Direction: "to-lport", Match: "ip4.dst == 10.10.0.2 && ip", Priority: 1002},
	{Action: "allow-related", Direction: "from-lport", Match: "ip4.src == 10.10.0.2 && ip", Priority: 1002},
}

// gwNode is a Node with its join address annotated, as the controller writes it, Ready or not.
func gwNode(name, ip, join string, ready bool) *corev1.Node {
	n := ctltest.Node(name, ip)
	n.Annotations = annotation.Encode(annotation.Network{Switch: kubeovn.JoinSubnet, IPs: []netip.Addr{netip.MustParseAddr(join)},
		MAC: northbound.GatewayMAC(netip.MustParseAddr(join)), CIDRs: []netip.Prefix{netip.MustParsePrefix("100.64.0.0/16")},
		Gateways: []netip.Addr{netip.MustParseAddr("100.64.0.1")}})
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
	return n
}

// labelled gives n the label role=value (none with "").
func labelled(n *corev1.Node, value string) *corev1.Node {
	if value != "" {
		n.Labels = map[string]string{"role": value}
	}
	return n
}

func refusedConds(reason string) []string {
	return []string{"Ready=False " + reason, "Validated=False " + reason, "Error=True " + reason}
}

// TestSubnetValidateApply: {Subnets, nodes, pods before} -> {conditions, switches, IPAM
// subnets, Events after}. A Subnet edgeovn refuses gets Validated/Ready False and Error True
// naming why, and one Warning Event; nothing of it is applied, and what was applied before
// (another Subnet's, or its own earlier spec) stays.
func TestSubnetValidateApply(t *testing.T) {
	spec := func(cidr string, gw string) kubeovn.SubnetSpec {
		return kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: cidr, Gateway: gw}
	}
	tests := []struct {
		name   string
		before world
		steps  []step
		want   subnetAfter
	}{{
		name:   "a valid Subnet is applied: IPAM subnet, switch, allow policy; Ready",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("blue", spec("10.50.0.0/24", "10.50.0.1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"blue": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch blue"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet blue 10.50.0.0/24"),
			nbHas:       []string{"policy 31000 ip4.dst == 10.50.0.0/24 allow"},
		},
	}, {
		name:   "a cidrBlock that does not parse is refused with an Event and its status",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("bad", spec("10.50.0.0/33", ""))}},
		want: subnetAfter{
			conds:       map[string][]string{"bad": refusedConds("InvalidSpec")},
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			events:      []string{`Warning InvalidSpec bad: invalid subnet spec: cidrBlock "10.50.0.0/33"`},
		},
	}, {
		name:   "a spec that does not read (excludeIps a string) is refused under the Subnet's name; what was applied stays",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("blue", spec("10.50.0.0/24", "10.50.0.1"))}},
		steps:  []step{rawSpecStep("blue", "excludeIps", "10.50.0.2")},
		want: subnetAfter{
			conds:       map[string][]string{"blue": refusedConds("InvalidSpec")},
			switches:    []string{"switch join", "switch ovn-default", "switch blue"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet blue 10.50.0.0/24"),
			events:      []string{"Warning InvalidSpec blue: read subnet blue"},
		},
	}, {
		name: "a Subnet overlapping one applied before is refused; the first keeps its CIDR",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("blue", spec("10.50.0.0/24", "10.50.0.1")),
			ctltest.Subnet("green", spec("10.50.0.128/25", "10.50.0.129"))}},
		want: subnetAfter{
			conds:       map[string][]string{"blue": appliedConds, "green": refusedConds("CIDROverlap")},
			switches:    []string{"switch join", "switch ovn-default", "switch blue"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet blue 10.50.0.0/24"),
			events:      []string{"Warning CIDROverlap green: cidrBlock 10.50.0.128/25 overlaps subnet blue (10.50.0.0/24)"},
		},
	}, {
		name:   "a Subnet overlapping ovn-default is refused",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("inside", spec("10.42.9.0/24", "10.42.9.1"))}},
		want: subnetAfter{
			conds:       map[string][]string{"inside": refusedConds("CIDROverlap")},
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			events:      []string{"Warning CIDROverlap inside: cidrBlock 10.42.9.0/24 overlaps subnet ovn-default (10.42.0.0/16)"},
		},
	}, {
		name: "a Subnet holding a Node's address is refused",
		before: world{nodes: []*corev1.Node{ctltest.Node("n1", "192.168.1.1")},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("lan", spec("192.168.1.0/24", "192.168.1.254"))}},
		want: subnetAfter{
			conds:       map[string][]string{"lan": refusedConds("CIDRReserved")},
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			events:      []string{"Warning CIDRReserved lan: cidr 192.168.1.0/24 overlaps address of node n1 192.168.1.1/32: refused"},
		},
	}, {
		name:   "a changed cidrBlock is refused; the applied CIDR, switch and pod stay",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("blue", spec("10.50.0.0/24", "10.50.0.1"))}, holds: []hold{{"blue", "default/a", "10.50.0.2"}}},
		steps: []step{updateStep("blue", func(s *kubeovn.SubnetSpec) {
			s.CIDRBlock, s.Gateway = "10.51.0.0/24", "10.51.0.1"
		})},
		want: subnetAfter{
			// Ready False: the spec's CIDR is not what runs (the applied one does, for the pods
			// that hold addresses in it).
			conds:       map[string][]string{"blue": refusedConds("CIDRChangeRefused")},
			switches:    []string{"switch join", "switch ovn-default", "switch blue"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet blue 10.50.0.0/24"),
			nbHas:       []string{"lsp blue a.default 0a:58:0a:32:00:02 10.50.0.2", "policy 31000 ip4.dst == 10.50.0.0/24 allow"},
			events:      []string{"Warning CIDRChangeRefused blue: cidrBlock changed from [10.50.0.0/24] to [10.51.0.0/24]"},
		},
	}, {
		name: "a bad allowSubnets entry on a private Subnet is refused; its isolation as applied stays",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("sec", kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4,
			CIDRBlock: "10.50.0.0/24", Gateway: "10.50.0.1", Private: true})}},
		steps: []step{updateStep("sec", func(s *kubeovn.SubnetSpec) { s.AllowSubnets = []string{"10.60.0.0/99"} })},
		want: subnetAfter{
			conds:       map[string][]string{"sec": {"Ready=True LogicalSwitchReady", "Validated=False InvalidSpec", "Error=True InvalidSpec"}},
			switches:    []string{"switch join", "switch ovn-default", "switch sec"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet sec 10.50.0.0/24"),
			nbHas:       []string{"acl sec 18600 to-lport ip4 && !(ip4.src == 10.50.0.0/24 && ip4.dst == 10.50.0.0/24) drop"},
			events:      []string{`Warning InvalidSpec sec: invalid subnet spec: allowSubnets entry "10.60.0.0/99" is not a CIDR`},
		},
	}, {
		name: "Kube-OVN's acls example: its ACLs on the switch at their priorities, allowEWTraffic's at 1900",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("acl", kubeovn.SubnetSpec{CIDRBlock: "10.10.0.0/24",
			ACLs: kubeOVNACLs, AllowEWTraffic: true})}},
		want: subnetAfter{
			conds:       map[string][]string{"acl": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch acl"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet acl 10.10.0.0/24"),
			nbHas: []string{"acl acl 1002 to-lport ip4.dst == 10.10.0.2 && ip drop",
				"acl acl 1002 from-lport ip4.src == 10.10.0.2 && ip allow-related",
				"acl acl 1900 to-lport ip4.src == 10.10.0.0/24 && ip4.dst == 10.10.0.0/24 allow",
				"acl acl 1900 from-lport ip4.src == 10.10.0.0/24 && ip4.dst == 10.10.0.0/24 allow"},
		},
	}, {
		name:   "an acl whose match OVN would not parse is refused by name; the ACLs applied stay",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("acl", kubeovn.SubnetSpec{CIDRBlock: "10.10.0.0/24", ACLs: kubeOVNACLs})}},
		steps: []step{updateStep("acl", func(s *kubeovn.SubnetSpec) {
			s.ACLs = []kubeovn.ACL{{Direction: "to-lport", Priority: 1003, Match: "ip4.dst == 10.10.0.3 &&", Action: "drop"}}
		})},
		want: subnetAfter{
			conds:       map[string][]string{"acl": {"Ready=True LogicalSwitchReady", "Validated=False InvalidSpec", "Error=True InvalidSpec"}},
			switches:    []string{"switch join", "switch ovn-default", "switch acl"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet acl 10.10.0.0/24"),
			nbHas:       []string{"acl acl 1002 to-lport ip4.dst == 10.10.0.2 && ip drop"},
			events:      []string{`Warning InvalidSpec acl: invalid subnet acl: acls[0].match: invalid OVN match "ip4.dst == 10.10.0.3 &&"`},
		},
	}, {
		name: "enableMulticastSnoop: snooping on the switch, the router port as querier; off removes it",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("mc", kubeovn.SubnetSpec{CIDRBlock: "10.10.0.0/24", EnableMulticastSnoop: true}),
			ctltest.Subnet("was", kubeovn.SubnetSpec{CIDRBlock: "10.11.0.0/24", EnableMulticastSnoop: true})}},
		steps: []step{updateStep("was", func(s *kubeovn.SubnetSpec) { s.EnableMulticastSnoop = false })},
		want: subnetAfter{
			conds:       map[string][]string{"mc": appliedConds, "was": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch mc", "switch was"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet mc 10.10.0.0/24", "subnet was 10.11.0.0/24"),
			nbHas: []string{"mcast mc mcast_snoop=true", "mcast mc mcast_querier=true", "mcast mc mcast_ip4_src=10.10.0.1",
				"mcast mc mcast_eth_src=0a:58:0a:0a:00:01"},
			nbLacks: []string{"mcast was "},
		},
	}, {
		name: "gatewayType centralized: the Subnet's outside traffic rerouted to the first ready gatewayNode's join address",
		before: world{nodes: []*corev1.Node{gwNode("n1", "192.168.9.1", "100.64.0.2", false), gwNode("n2", "192.168.9.2", "100.64.0.3", true),
			gwNode("n3", "192.168.9.3", "100.64.0.4", true)},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized",
				GatewayNode: "n1, n2:192.168.9.2,n3", NatOutgoing: true})}},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbHas:       []string{"policy 29050 ip4.src == 10.166.0.0/16 reroute 100.64.0.3"},
			status:      map[string]string{"centralized": "n2"},
		},
	}, {
		name: "centralized back to distributed: the gateway policy goes",
		before: world{nodes: []*corev1.Node{gwNode("n1", "192.168.9.1", "100.64.0.2", true)},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized",
				GatewayNode: "n1"})}},
		steps: []step{updateStep("centralized", func(s *kubeovn.SubnetSpec) { s.GatewayType, s.GatewayNode = "distributed", "" })},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbLacks:     []string{"policy 29050 "},
			status:      map[string]string{"centralized": ""},
		},
	}, {
		name: "a gatewayNode naming no node is refused by name; the gateway applied stays",
		before: world{nodes: []*corev1.Node{gwNode("n1", "192.168.9.1", "100.64.0.2", true)},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized",
				GatewayNode: "n1"})}},
		steps: []step{updateStep("centralized", func(s *kubeovn.SubnetSpec) { s.GatewayNode = "ghost1,ghost2" })},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": {"Ready=True LogicalSwitchReady", "Validated=False InvalidSpec", "Error=True InvalidSpec"}},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbHas:       []string{"policy 29050 ip4.src == 10.166.0.0/16 reroute 100.64.0.2"},
			events:      []string{`Warning InvalidSpec centralized: invalid subnet spec: gatewayNode "ghost1,ghost2" names no node of the cluster`},
		},
	}, {
		name: "enableEcmp: one policy rerouting to every ready gateway host's join address",
		before: world{nodes: []*corev1.Node{gwNode("n1", "192.168.9.1", "100.64.0.2", false), gwNode("n2", "192.168.9.2", "100.64.0.3", true),
			gwNode("n3", "192.168.9.3", "100.64.0.4", true)},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized",
				GatewayNode: "n1,n2,n3", EnableEcmp: true})}},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbHas:       []string{"policy 29050 ip4.src == 10.166.0.0/16 reroute 100.64.0.3 100.64.0.4"},
			status:      map[string]string{"centralized": "n2,n3"},
		},
	}, {
		name: "gatewayNodeSelectors: the labelled Nodes are the gateway hosts, the first ready by name in use",
		before: world{nodes: []*corev1.Node{labelled(gwNode("n1", "192.168.9.1", "100.64.0.2", true), ""), labelled(gwNode("n2", "192.168.9.2", "100.64.0.3", true), "gw"),
			labelled(gwNode("n3", "192.168.9.3", "100.64.0.4", true), "gw")},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized",
				GatewayNodeSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"role": "gw"}}}})}},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbHas:       []string{"policy 29050 ip4.src == 10.166.0.0/16 reroute 100.64.0.3"},
			status:      map[string]string{"centralized": "n2"},
		},
	}, {
		name: "gatewayNodeSelectors with enableEcmp: every labelled ready Node",
		before: world{nodes: []*corev1.Node{labelled(gwNode("n1", "192.168.9.1", "100.64.0.2", true), ""), labelled(gwNode("n2", "192.168.9.2", "100.64.0.3", true), "gw"),
			labelled(gwNode("n3", "192.168.9.3", "100.64.0.4", true), "gw")},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized", EnableEcmp: true,
				GatewayNodeSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: metav1.LabelSelectorOpIn, Values: []string{"gw"}}}}}})}},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": appliedConds},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbHas:       []string{"policy 29050 ip4.src == 10.166.0.0/16 reroute 100.64.0.3 100.64.0.4"},
			status:      map[string]string{"centralized": "n2,n3"},
		},
	}, {
		name: "a gatewayNodeSelectors entry that does not parse is refused by name; the gateway applied stays",
		before: world{nodes: []*corev1.Node{gwNode("n1", "192.168.9.1", "100.64.0.2", true)},
			subnets: []*kubeovn.Subnet{ctltest.Subnet("centralized", kubeovn.SubnetSpec{CIDRBlock: "10.166.0.0/16", GatewayType: "centralized",
				GatewayNode: "n1"})}},
		steps: []step{updateStep("centralized", func(s *kubeovn.SubnetSpec) {
			s.GatewayNode = ""
			s.GatewayNodeSelectors = []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "role", Operator: "Near"}}}}
		})},
		want: subnetAfter{
			conds:       map[string][]string{"centralized": {"Ready=True LogicalSwitchReady", "Validated=False InvalidSpec", "Error=True InvalidSpec"}},
			switches:    []string{"switch join", "switch ovn-default", "switch centralized"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet centralized 10.166.0.0/16"),
			nbHas:       []string{"policy 29050 ip4.src == 10.166.0.0/16 reroute 100.64.0.2"},
			events:      []string{`Warning InvalidSpec centralized: invalid subnet spec: gatewayNodeSelectors[0]: "Near" is not a valid label selector operator`},
		},
	}, {
		name:   "an mtu out of range is refused by name",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("jumbo", kubeovn.SubnetSpec{CIDRBlock: "10.10.0.0/24", Mtu: 70000})}},
		want: subnetAfter{
			conds:       map[string][]string{"jumbo": refusedConds("InvalidSpec")},
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			events:      []string{"Warning InvalidSpec jumbo: invalid subnet spec: mtu 70000 is outside 68-65535"},
		},
	}, {
		name: "a deleted Subnet is held while a pod holds an address in it; its rows stay",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("blue", spec("10.50.0.0/24", "10.50.0.1"))},
			holds: []hold{{"blue", "default/a", "10.50.0.2"}}},
		steps: []step{deleteStep("blue")},
		want: subnetAfter{
			conds:       map[string][]string{"blue": {"Ready=False SubnetInUse", "Validated=True ValidateLogicalSwitchSuccess", "Error=False NoError"}},
			switches:    []string{"switch join", "switch ovn-default", "switch blue"},
			ipamSubnets: append(slices.Clone(builtinRows), "subnet blue 10.50.0.0/24"),
			nbHas:       []string{"lsp blue a.default 0a:58:0a:32:00:02 10.50.0.2"},
			finalizers:  map[string]string{"blue": SubnetFinalizer},
			events:      []string{"Warning SubnetInUse blue: deletion waits for 1 pod(s) holding addresses in it: default/a (delete them, or let them finish)"},
		},
	}, {
		name: "a deleted Subnet goes with its rows once its last address is released",
		before: world{subnets: []*kubeovn.Subnet{ctltest.Subnet("blue", spec("10.50.0.0/24", "10.50.0.1"))},
			holds: []hold{{"blue", "default/a", "10.50.0.2"}}},
		steps: []step{deleteStep("blue"), releaseStep(hold{"blue", "default/a", "10.50.0.2"})},
		want: subnetAfter{
			switches:    []string{"switch join", "switch ovn-default"},
			ipamSubnets: builtinRows,
			finalizers:  map[string]string{"blue": ""},
			events:      []string{"Warning SubnetInUse blue: deletion waits for"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.before)
			for _, s := range tt.steps {
				if err := s.do(r); err != nil {
					t.Errorf("%s: %v", s.name, err)
				}
			}
			r.check(tt.want)
		})
	}
}
