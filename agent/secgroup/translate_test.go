package secgroup

import (
	"errors"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/netpol"
	"github.com/edgeovn/edgeovn/agent/subnetacl"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

var join = []netip.Prefix{netip.MustParsePrefix("100.64.0.0/16")}

// fenceLines are Fence's ACLs of group "sg1" as "DIR PRIO ACTION MATCH".
var fenceLines = []string{
	"to-lport 18500 allow-related outport == @ovn.sg.sg1 && ip4.src == 100.64.0.0/16",
	"to-lport 2005 allow-related outport == @ovn.sg.sg1 && icmp6.type == {130, 134, 135, 136} && icmp6.code == 0 && ip.ttl == 255",
	"to-lport 2003 drop outport == @ovn.sg.sg1 && ip",
	"from-lport 2005 allow-related inport == @ovn.sg.sg1 && icmp6.type == {130, 133, 135, 136} && icmp6.code == 0 && ip.ttl == 255",
	"from-lport 2003 drop inport == @ovn.sg.sg1 && ip",
}

func lines(acls []northbound.ACLRule) []string {
	out := make([]string, len(acls))
	for i, a := range acls {
		out[i] = strings.Join([]string{string(a.Direction), strconv.Itoa(a.Priority), string(a.Action), a.Match}, " ")
	}
	return out
}

func rule(mod func(*kubeovn.SecurityGroupRule)) kubeovn.SecurityGroupRule {
	r := kubeovn.SecurityGroupRule{IPVersion: "ipv4", Protocol: "tcp", Priority: 10, RemoteType: "address",
		RemoteAddress: "10.42.0.0/16", PortRangeMin: 80, PortRangeMax: 80, Policy: "allow"}
	if mod != nil {
		mod(&r)
	}
	return r
}

// TestRules: a rule -> its ACL (the lines after Fence's), or the error naming its field.
func TestRules(t *testing.T) {
	exists := func(n string) bool { return n == "sg1" || n == "web" }
	tests := []struct {
		name    string
		spec    kubeovn.SecurityGroupSpec
		want    []string // after the fence
		wantErr string
	}{{
		name: "Kube-OVN's documentation example",
		spec: kubeovn.SecurityGroupSpec{AllowSameGroupTraffic: true,
			EgressRules:  []kubeovn.SecurityGroupRule{{IPVersion: "ipv4", Policy: "allow", Priority: 1, Protocol: "all", RemoteAddress: "10.16.0.13", RemoteType: "address"}},
			IngressRules: []kubeovn.SecurityGroupRule{{IPVersion: "ipv4", Policy: "deny", Priority: 1, Protocol: "icmp", RemoteAddress: "10.16.0.14", RemoteType: "address"}}},
		want: []string{
			"to-lport 2004 allow-related outport == @ovn.sg.sg1 && ip4 && ip4.src == $ovn.sg.sg1.associated.v4",
			"to-lport 2004 allow-related outport == @ovn.sg.sg1 && ip6 && ip6.src == $ovn.sg.sg1.associated.v6",
			"to-lport 18483 drop outport == @ovn.sg.sg1 && ip4 && ip4.src == 10.16.0.14 && icmp4",
			"from-lport 2004 allow-related inport == @ovn.sg.sg1 && ip4 && ip4.dst == $ovn.sg.sg1.associated.v4",
			"from-lport 2004 allow-related inport == @ovn.sg.sg1 && ip6 && ip6.dst == $ovn.sg.sg1.associated.v6",
			"from-lport 18483 allow-related inport == @ovn.sg.sg1 && ip4 && ip4.dst == 10.16.0.13",
		},
	}, {
		name: "a port range from a CIDR",
		spec: kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.PortRangeMax = 90 })}},
		want: []string{"to-lport 18474 allow-related outport == @ovn.sg.sg1 && ip4 && ip4.src == 10.42.0.0/16 && 80 <= tcp.dst <= 90"},
	}, {
		name: "udp from a remote group, lowest priority",
		spec: kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) {
			r.Protocol, r.RemoteType, r.RemoteSecurityGroup, r.Priority = "udp", "securityGroup", "web", 16384
		})}},
		want: []string{"to-lport 2100 allow-related outport == @ovn.sg.sg1 && ip4 && ip4.src == $ovn.sg.web.associated.v4 && 80 <= udp.dst <= 80"},
	}, {
		name: "ipv6 egress drop with a local address and source ports",
		spec: kubeovn.SecurityGroupSpec{EgressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) {
			r.IPVersion, r.RemoteAddress, r.LocalAddress, r.Policy = "ipv6", "fd00::/64", "fd00:42::5", "drop"
			r.SourcePortRangeMin, r.SourcePortRangeMax = 1024, 2048
		})}},
		want: []string{"from-lport 18474 drop inport == @ovn.sg.sg1 && ip6 && ip6.dst == fd00::/64 && ip6.src == fd00:42::5 && 80 <= tcp.dst <= 80 && 1024 <= tcp.src <= 2048"},
	}, {
		name: "the same rule twice is one ACL",
		spec: kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(nil), rule(nil)}},
		want: []string{"to-lport 18474 allow-related outport == @ovn.sg.sg1 && ip4 && ip4.src == 10.42.0.0/16 && 80 <= tcp.dst <= 80"},
	}, {
		name:    "portRangeMin above portRangeMax",
		spec:    kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(nil), rule(func(r *kubeovn.SecurityGroupRule) { r.PortRangeMin = 100 })}},
		wantErr: "ingressRules[1].portRangeMin 100 is greater than portRangeMax 80",
	}, {
		name:    "a tcp rule without ports",
		spec:    kubeovn.SecurityGroupSpec{EgressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.PortRangeMin, r.PortRangeMax = 0, 0 })}},
		wantErr: "egressRules[0].portRangeMin 0 is out of range 1-65535",
	}, {
		name:    "priority out of range",
		spec:    kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.Priority = 16385 })}},
		wantErr: "ingressRules[0].priority 16385 is out of range 1-16384",
	}, {
		name:    "priority missing",
		spec:    kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.Priority = 0 })}},
		wantErr: "ingressRules[0].priority 0 is out of range",
	}, {
		name:    "unknown protocol",
		spec:    kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.Protocol = "sctp" })}},
		wantErr: `ingressRules[0].protocol "sctp": want all, icmp, tcp or udp`,
	}, {
		name:    "a missing remote group",
		spec:    kubeovn.SecurityGroupSpec{EgressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.RemoteType, r.RemoteSecurityGroup = "securityGroup", "nope" })}},
		wantErr: "egressRules[0].remoteSecurityGroup: security group nope not found",
	}, {
		name:    "an address of the other family",
		spec:    kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.RemoteAddress = "fd00::1" })}},
		wantErr: `ingressRules[0].remoteAddress "fd00::1": not of the rule's ipVersion`,
	}, {
		name:    "policy pass",
		spec:    kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(func(r *kubeovn.SecurityGroupRule) { r.Policy = "pass" })}},
		wantErr: "ingressRules[0].policy pass needs OVN ACL tiers",
	}, {
		name:    "tier 1",
		spec:    kubeovn.SecurityGroupSpec{Tier: 1},
		wantErr: "tier 1: OVN 23.03 has no ACL tiers",
	}, {
		name: "the same traffic allowed and dropped at one priority",
		spec: kubeovn.SecurityGroupSpec{IngressRules: []kubeovn.SecurityGroupRule{rule(nil),
			rule(func(r *kubeovn.SecurityGroupRule) { r.Policy = "drop" })}},
		wantErr: "ingressRules[1]: the same traffic at the same priority",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acls, err := Rules(Group{Name: "sg1", Spec: tt.spec, Exists: exists, Hosts: join})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				if !errors.Is(err, kubeovn.ErrInvalidSecurityGroup) && !errors.Is(err, ErrRemoteNotFound) {
					t.Errorf("error %v is neither ErrInvalidSecurityGroup nor ErrRemoteNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := lines(acls)
			want := append(append([]string{}, fenceLines...), tt.want...)
			// The order within a direction does not matter to OVN; compare as sets.
			if d := setDiff(got, want); d != "" {
				t.Errorf("acls:%s", d)
			}
			if err := Rows("sg1", nil, acls).Validate(); err != nil {
				t.Errorf("rows refused by northbound: %v", err)
			}
		})
	}
}

func setDiff(got, want []string) string {
	var d strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			d.WriteString("\n  missing: " + w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			d.WriteString("\n  extra:   " + g)
		}
	}
	return d.String()
}

// TestRows: the port group holds the members' ports, the address sets their addresses by
// family, sorted and once each.
func TestRows(t *testing.T) {
	spec := Rows("my-group", []Member{
		{Port: "b.ns", IPs: []netip.Addr{netip.MustParseAddr("10.42.0.9"), netip.MustParseAddr("fd00::9")}},
		{Port: "a.ns", IPs: []netip.Addr{netip.MustParseAddr("10.42.0.3")}},
	}, nil)
	pg := spec.PortGroups[0]
	if pg.Name != "ovn.sg.my.group" || strings.Join(pg.Ports, ",") != "a.ns,b.ns" {
		t.Errorf("port group %s %v", pg.Name, pg.Ports)
	}
	if as := spec.AddressSets; as[0].Name != "ovn.sg.my.group.associated.v4" || len(as[0].Addresses) != 2 ||
		as[0].Addresses[0].String() != "10.42.0.3/32" || as[1].Name != "ovn.sg.my.group.associated.v6" || len(as[1].Addresses) != 1 {
		t.Errorf("address sets %+v", as)
	}
	if spec.Owner.Kind != "SecurityGroup" || spec.Owner.Name != "my-group" {
		t.Errorf("owner %+v", spec.Owner)
	}
}

// TestPriorityOrder: the order doc.go promises, from a private Subnet's rows down to the
// NetworkPolicies'.
func TestPriorityOrder(t *testing.T) {
	order := []struct {
		name string
		p    int
	}{
		{"subnet hosts allow", subnetacl.HostsPriority}, {"subnet drop", subnetacl.DropPriority},
		{"group hosts allow", HostsPriority}, {"rule priority 1", RulePriority(kubeovn.SgPriorityMin)},
		{"rule priority 16384", RulePriority(kubeovn.SgPriorityMax)}, {"base", BasePriority},
		{"same group", SameGroupPriority}, {"group drop", DropPriority},
		{"policy allow", netpol.AllowPriority}, {"policy deny", netpol.DenyPriority},
	}
	for i := 1; i < len(order); i++ {
		if order[i-1].p <= order[i].p {
			t.Errorf("%s (%d) must be above %s (%d)", order[i-1].name, order[i-1].p, order[i].name, order[i].p)
		}
	}
}
