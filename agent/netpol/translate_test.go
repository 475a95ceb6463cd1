package netpol

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// cluster: namespaces x and y; pods a (app=a, named port "web" = tcp/80), b (app=b, "web" =
// tcp/81) in each; a host-network pod h in x.
func cluster() Cluster {
	pod := func(ns, name, ip string, web int32) Pod {
		return Pod{Namespace: ns, Name: name, Labels: map[string]string{"app": name}, IPs: []netip.Addr{netip.MustParseAddr(ip)},
			Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: web, Protocol: corev1.ProtocolTCP}, {Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP}}}
	}
	return Cluster{
		Pods: []Pod{pod("x", "a", "10.42.0.10", 80), pod("x", "b", "10.42.0.11", 81), pod("y", "a", "10.42.0.20", 80),
			pod("y", "b", "10.42.0.21", 81), {Namespace: "x", Name: "h", Labels: map[string]string{"app": "a"}, HostNetwork: true}},
		Namespaces: map[string]map[string]string{"x": {"ns": "x"}, "y": {"ns": "y"}},
	}
}

func sel(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func policy(spec networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "p"}, Spec: spec}
}

func tcp(port int32) networkingv1.NetworkPolicyPort {
	p := intstr.FromInt32(port)
	proto := corev1.ProtocolTCP
	return networkingv1.NetworkPolicyPort{Protocol: &proto, Port: &p}
}

func named(name string, proto corev1.Protocol) networkingv1.NetworkPolicyPort {
	p := intstr.FromString(name)
	return networkingv1.NetworkPolicyPort{Protocol: &proto, Port: &p}
}

var pg = PortGroupName("x", "p")

func TestTranslate(t *testing.T) {
	ingressOnly := []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
	egressOnly := []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}
	endPort := int32(90)
	rangeFrom := tcp(80)
	rangeFrom.EndPort = &endPort
	sctp := corev1.ProtocolSCTP
	for _, tc := range []struct {
		name     string
		spec     networkingv1.NetworkPolicySpec
		ports    []string // selected pods' ports
		in, eg   bool
		acls     []string // "direction match", in order
		sets     map[string]string
		problems int
	}{{
		name: "deny all ingress", spec: networkingv1.NetworkPolicySpec{PolicyTypes: ingressOnly},
		ports: []string{"a.x", "b.x"}, in: true, problems: 1,
	}, {
		name: "pod selector peer on a port",
		spec: networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a"), Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "b")}}, Ports: []networkingv1.NetworkPolicyPort{tcp(80)}}}},
		ports: []string{"a.x"}, in: true, problems: 1,
		acls: []string{"to-lport outport == @" + pg + " && ip4.src == $" + pg + ".in0_ip4 && tcp.dst == 80"},
		sets: map[string]string{pg + ".in0_ip4": "10.42.0.11/32"},
	}, {
		name: "namespace selector, both selectors, ip block with except, port range and sctp",
		spec: networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "b"), Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("ns", "y")}},
		}, {
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}, PodSelector: sel("app", "b")},
				{IPBlock: &networkingv1.IPBlock{CIDR: "192.168.0.0/16", Except: []string{"192.168.1.0/24"}}}},
			Ports: []networkingv1.NetworkPolicyPort{rangeFrom, {Protocol: &sctp}},
		}}},
		ports: []string{"b.x"}, in: true,
		acls: []string{"to-lport outport == @" + pg + " && ip4.src == $" + pg + ".in0_ip4",
			"to-lport outport == @" + pg + " && (ip4.src == $" + pg + ".in1_ip4 || (ip4.src == 192.168.0.0/16 && ip4.src != {192.168.1.0/24})) && ((tcp.dst >= 80 && tcp.dst <= 90) || sctp)"},
		sets: map[string]string{pg + ".in0_ip4": "10.42.0.20/32 10.42.0.21/32", pg + ".in1_ip4": "10.42.0.11/32 10.42.0.21/32"},
	}, {
		name: "named port resolves per selected pod",
		spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{named("web", corev1.ProtocolTCP), named("web", corev1.ProtocolUDP)}}}},
		ports: []string{"a.x", "b.x"}, in: true, problems: 1,
		acls: []string{"to-lport outport == @" + pg + " && ip4.dst == $" + pg + ".in0.web.tcp80_ip4 && tcp.dst == 80",
			"to-lport outport == @" + pg + " && ip4.dst == $" + pg + ".in0.web.tcp81_ip4 && tcp.dst == 81"},
		sets: map[string]string{pg + ".in0.web.tcp80_ip4": "10.42.0.10/32", pg + ".in0.web.tcp81_ip4": "10.42.0.11/32"},
	}, {
		name: "egress named port resolves per peer, after the load balancer",
		spec: networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a"), PolicyTypes: egressOnly, Egress: []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: sel("ns", "y")}, {IPBlock: &networkingv1.IPBlock{CIDR: "10.42.0.11/32"}}},
			Ports: []networkingv1.NetworkPolicyPort{named("web", corev1.ProtocolTCP)}}}},
		ports: []string{"a.x"}, eg: true, problems: 1,
		acls: []string{"from-lport inport == @" + pg + " && ip4.dst == $" + pg + ".eg0.web.tcp80_ip4 && tcp.dst == 80",
			"from-lport inport == @" + pg + " && ip4.dst == $" + pg + ".eg0.web.tcp81_ip4 && tcp.dst == 81"},
		sets: map[string]string{pg + ".eg0_ip4": "10.42.0.20/32 10.42.0.21/32",
			pg + ".eg0.web.tcp80_ip4": "10.42.0.20/32", pg + ".eg0.web.tcp81_ip4": "10.42.0.11/32 10.42.0.21/32"},
	}, {
		name: "egress rules imply both types; duplicate rules give one ACL",
		spec: networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "b"),
			Egress: []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{tcp(53)}}, {Ports: []networkingv1.NetworkPolicyPort{tcp(53)}}}},
		ports: []string{"b.x"}, in: true, eg: true,
		acls: []string{"from-lport inport == @" + pg + " && tcp.dst == 53"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			res := Translate(policy(tc.spec), cluster())
			if err := res.Rows.Validate(); err != nil {
				t.Fatalf("rows do not validate: %v", err)
			}
			if res.Ingress != tc.in || res.Egress != tc.eg {
				t.Errorf("types = %v/%v, want %v/%v", res.Ingress, res.Egress, tc.in, tc.eg)
			}
			if len(res.Problems) != tc.problems {
				t.Errorf("problems = %q, want %d", res.Problems, tc.problems)
			}
			got := res.Rows.PortGroups[0]
			if got.Name != pg || !slices.Equal(got.Ports, tc.ports) {
				t.Errorf("port group %s %v, want %s %v", got.Name, got.Ports, pg, tc.ports)
			}
			var acls []string
			for _, a := range got.ACLs {
				acls = append(acls, a.Direction+" "+a.Match)
				if a.Priority != AllowPriority || a.Action != nbdb.ACLActionAllowRelated || a.AfterLB != (a.Direction == nbdb.ACLDirectionFromLport) {
					t.Errorf("acl %+v: want allow-related at %d, after-lb for egress", a, AllowPriority)
				}
			}
			if strings.Join(acls, "\n") != strings.Join(tc.acls, "\n") {
				t.Errorf("acls:\n%s\nwant:\n%s", strings.Join(acls, "\n"), strings.Join(tc.acls, "\n"))
			}
			sets := map[string]string{}
			for _, s := range res.Rows.AddressSets {
				sets[s.Name] = prefixString(s.Addresses)
			}
			for name, want := range tc.sets {
				if sets[name] != want {
					t.Errorf("address set %s = %q, want %q (all: %v)", name, sets[name], want, sets)
				}
			}
		})
	}
}

func prefixString(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}

// TestNamespace: the deny groups hold what any policy selects per direction; the drop loses
// to every allow; the nodes are let in; IPv6 adds neighbour discovery.
func TestNamespace(t *testing.T) {
	c := cluster()
	in := Translate(policy(networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "a")}), c)
	egSpec := networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "b"), PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}
	eg := Translate(policy(egSpec), c)
	rows := Namespace("x", []Result{in, eg}, c)
	if err := rows.Validate(); err != nil {
		t.Fatal(err)
	}
	inPG, egPG := DenyGroupNames("x")
	want := []northbound.PortGroupACLs{
		{Name: inPG, Ports: []string{"a.x"}, ACLs: []northbound.ACLRule{
			{Direction: "to-lport", Priority: DenyPriority, Match: "outport == @" + inPG + " && ip", Action: "drop", Name: "x:default-deny-in"},
			{Direction: "to-lport", Priority: AllowPriority, Match: "outport == @" + inPG + " && ip4.src == $" + HostsAddressSet, Action: "allow-related", Name: "x:from-hosts"}}},
		{Name: egPG, Ports: []string{"b.x"}, ACLs: []northbound.ACLRule{
			{Direction: "from-lport", Priority: DenyPriority, Match: "inport == @" + egPG + " && ip", Action: "drop", Name: "x:default-deny-eg", AfterLB: true},
			{Direction: "from-lport", Priority: AllowPriority, Match: "inport == @" + egPG + " && ct.est && ct.rpl", Action: "allow-related", Name: "x:replies-eg", AfterLB: true}}},
	}
	for i := range want {
		g := rows.PortGroups[i]
		if g.Name != want[i].Name || !slices.Equal(g.Ports, want[i].Ports) || !slices.Equal(g.ACLs, want[i].ACLs) {
			t.Errorf("deny group %d = %+v\nwant %+v", i, g, want[i])
		}
	}
	c.IPv6 = true
	acls := Namespace("x", []Result{in}, c).PortGroups[0].ACLs
	if n := len(acls); n != 3 {
		t.Errorf("IPv6: %d ingress deny-group ACLs, want 3 (with nd)", n)
	}
	// The hosts' probes come over IPv6 too: their IPv6 join addresses are let in.
	if want := "outport == @" + inPG + " && (ip4.src == $" + HostsAddressSet + " || ip6.src == $" + HostsAddressSet6 + ")"; acls[1].Match != want {
		t.Errorf("IPv6: from-hosts match %q, want %q", acls[1].Match, want)
	}
	hosts := Hosts([]netip.Addr{netip.MustParseAddr("100.64.0.3"), netip.MustParseAddr("fd00:100:64::3"), netip.MustParseAddr("100.64.0.2"), netip.MustParseAddr("fd00:100:64::2")})
	if err := hosts.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(hosts.AddressSets) != 2 || hosts.AddressSets[0].Name != HostsAddressSet || hosts.AddressSets[1].Name != HostsAddressSet6 {
		t.Fatalf("hosts' address sets %+v, want %s and %s", hosts.AddressSets, HostsAddressSet, HostsAddressSet6)
	}
	if got := prefixString(hosts.AddressSets[0].Addresses); got != "100.64.0.2/32 100.64.0.3/32" {
		t.Errorf("hosts, IPv4 = %s", got)
	}
	if got := prefixString(hosts.AddressSets[1].Addresses); got != "fd00:100:64::2/128 fd00:100:64::3/128" {
		t.Errorf("hosts, IPv6 = %s", got)
	}
}

func TestNamesAreOVNNames(t *testing.T) {
	for _, n := range []string{PortGroupName("kube-system", "allow-dns"), HostsAddressSet, HostsAddressSet6} {
		if err := (northbound.AddressSetSpec{Name: n, Owner: HostsOwner}).Validate(); err != nil {
			t.Error(err)
		}
	}
	if PortGroupName("a-b", "c") == PortGroupName("a", "b-c") {
		t.Error("names collide")
	}
}
