package subnetacl

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// kubeOVNACLs is the acls of Kube-OVN's Subnet ACL example (guide/subnet).
var kubeOVNACLs = []kubeovn.ACL{
	{Action: "drop", Direction: "to-lport", Match: "ip4.dst == 10.10.0.2 && ip", Priority: 1002},
	{Action: "allow-related", Direction: "from-lport", Match: "ip4.src == 10.10.0.2 && ip", Priority: 1002},
}

func TestBuildCustom(t *testing.T) {
	acl0 := northbound.ACLRule{Direction: nbdb.ACLDirectionToLport, Priority: 1002, Match: "ip4.dst == 10.10.0.2 && ip",
		Action: nbdb.ACLActionDrop, Name: "acl:acl0"}
	acl1 := northbound.ACLRule{Direction: nbdb.ACLDirectionFromLport, Priority: 1002, Match: "ip4.src == 10.10.0.2 && ip",
		Action: nbdb.ACLActionAllowRelated, Name: "acl:acl1"}
	ew := func(dir, match, name string) northbound.ACLRule {
		return northbound.ACLRule{Direction: dir, Priority: EWTrafficPriority, Match: match, Action: nbdb.ACLActionAllow, Name: name}
	}
	tests := []struct {
		name string
		req  Request
		want []northbound.ACLRule
	}{
		{"Kube-OVN's example: each acl at its own priority",
			Request{Subnet: "acl", CIDRs: prefixes("10.10.0.0/24"), ACLs: kubeOVNACLs}, []northbound.ACLRule{acl0, acl1}},
		{"allowEWTraffic: Kube-OVN's same-subnet allow at 1900, both directions",
			Request{Subnet: "acl", CIDRs: prefixes("10.10.0.0/24"), ACLs: kubeOVNACLs, AllowEWTraffic: true},
			[]northbound.ACLRule{acl0, acl1,
				ew("from-lport", "ip4.src == 10.10.0.0/24 && ip4.dst == 10.10.0.0/24", "acl:ew-ip4"),
				ew("to-lport", "ip4.src == 10.10.0.0/24 && ip4.dst == 10.10.0.0/24", "acl:ew-ip4")}},
		{"allowEWTraffic, dual stack: one pair per family",
			Request{Subnet: "d", CIDRs: prefixes("10.10.0.0/24", "fd00:10::/64"), ACLs: kubeOVNACLs[:1], AllowEWTraffic: true},
			[]northbound.ACLRule{{Direction: "to-lport", Priority: 1002, Match: "ip4.dst == 10.10.0.2 && ip", Action: "drop", Name: "d:acl0"},
				ew("from-lport", "ip4.src == 10.10.0.0/24 && ip4.dst == 10.10.0.0/24", "d:ew-ip4"),
				ew("to-lport", "ip4.src == 10.10.0.0/24 && ip4.dst == 10.10.0.0/24", "d:ew-ip4"),
				ew("from-lport", "ip6.src == fd00:10::/64 && ip6.dst == fd00:10::/64", "d:ew-ip6"),
				ew("to-lport", "ip6.src == fd00:10::/64 && ip6.dst == fd00:10::/64", "d:ew-ip6")}},
		{"allowEWTraffic without acls: nothing, as in Kube-OVN",
			Request{Subnet: "acl", CIDRs: prefixes("10.10.0.0/24"), AllowEWTraffic: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Build(tt.req); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Build =\n%v\nwant\n%v", got, tt.want)
			}
		})
	}
	// Beside a private Subnet's isolation: both sets, the isolation's drop highest.
	got := Build(Request{Subnet: "p", Private: true, CIDRs: prefixes("10.10.0.0/24"), ACLs: kubeOVNACLs})
	if len(got) != 4 || got[0].Priority != 1002 || got[len(got)-1].Priority != DropPriority {
		t.Errorf("private with acls: %v", got)
	}
}

func TestCheckACLs(t *testing.T) {
	if err := CheckACLs(kubeOVNACLs); err != nil {
		t.Fatalf("Kube-OVN's example refused: %v", err)
	}
	good := kubeOVNACLs[0]
	bad := func(f func(*kubeovn.ACL)) []kubeovn.ACL {
		a := good
		f(&a)
		return []kubeovn.ACL{kubeOVNACLs[1], a}
	}
	for _, tt := range []struct {
		acls []kubeovn.ACL
		want string
	}{
		{bad(func(a *kubeovn.ACL) { a.Match = "ip4.dst == 10.10.0.2 &&" }), "acls[1].match: invalid OVN match"},
		{bad(func(a *kubeovn.ACL) { a.Match = "ip4.dst == 10.10.0.2 && tcp || udp" }), "acls[1].match"},
		{bad(func(a *kubeovn.ACL) { a.Match = "" }), "acls[1].match"},
		{bad(func(a *kubeovn.ACL) { a.Direction = "ingress" }), `acls[1].direction "ingress"`},
		{bad(func(a *kubeovn.ACL) { a.Priority = 32768 }), "acls[1].priority 32768"},
		{bad(func(a *kubeovn.ACL) { a.Priority = -1 }), "acls[1].priority -1"},
		{bad(func(a *kubeovn.ACL) { a.Action = "deny" }), `acls[1].action "deny"`},
		{bad(func(a *kubeovn.ACL) { a.Action = "" }), `acls[1].action ""`},
		{append(kubeOVNACLs, good), "acls[2] repeats acls[0]"},
	} {
		err := CheckACLs(tt.acls)
		if !errors.Is(err, ErrBadACL) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("CheckACLs(%v) = %v, want %q", tt.acls, err, tt.want)
		}
	}
}
