package subnetacl

import (
	"net/netip"
	"reflect"
	"testing"

	"github.com/edgeovn/edgeovn/agent/netpol"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

func drop(name, match string) northbound.ACLRule {
	return northbound.ACLRule{Direction: nbdb.ACLDirectionToLport, Priority: DropPriority, Match: match, Action: nbdb.ACLActionDrop, Name: name}
}

func hosts(name, match string) northbound.ACLRule {
	return northbound.ACLRule{Direction: nbdb.ACLDirectionToLport, Priority: HostsPriority, Match: match, Action: nbdb.ACLActionAllowRelated, Name: name}
}

func TestBuild(t *testing.T) {
	join := prefixes("100.64.0.0/16")
	tests := []struct {
		name string
		req  Request
		want []northbound.ACLRule
	}{
		{"not private: no acl, allowSubnets or not",
			Request{Subnet: "s", CIDRs: prefixes("10.69.0.0/16"), Allow: prefixes("10.16.0.0/16"), Hosts: join}, nil},
		{"Kube-OVN's example: private, two allowed subnets",
			Request{Subnet: "private", Private: true, CIDRs: prefixes("10.69.0.0/16"), Allow: prefixes("10.18.0.0/16", "10.16.0.0/16"), Hosts: join},
			[]northbound.ACLRule{
				drop("private:private-ip4", "ip4 && !(ip4.src == 10.69.0.0/16 && ip4.dst == {10.16.0.0/16, 10.18.0.0/16, 10.69.0.0/16}) && !(ip4.src == {10.16.0.0/16, 10.18.0.0/16} && ip4.dst == 10.69.0.0/16)"),
				drop("private:private-ip6", "ip6"),
				hosts("private:hosts-ip4", "ip4.src == 100.64.0.0/16"),
			}},
		{"private alone: its own CIDR only",
			Request{Subnet: "p", Private: true, CIDRs: prefixes("10.69.0.0/16"), Hosts: join},
			[]northbound.ACLRule{
				drop("p:private-ip4", "ip4 && !(ip4.src == 10.69.0.0/16 && ip4.dst == 10.69.0.0/16)"),
				drop("p:private-ip6", "ip6"),
				hosts("p:hosts-ip4", "ip4.src == 100.64.0.0/16"),
			}},
		{"dual stack: each family its own CIDR and allowed ones; host bits and duplicates dropped",
			Request{Subnet: "d", Private: true, CIDRs: prefixes("10.16.0.0/16", "fd00:10:16::/64"),
				Allow: prefixes("fd00:20::5/64", "10.20.0.0/16", "fd00:20::/64"), Hosts: join},
			[]northbound.ACLRule{
				drop("d:private-ip4", "ip4 && !(ip4.src == 10.16.0.0/16 && ip4.dst == {10.16.0.0/16, 10.20.0.0/16}) && !(ip4.src == 10.20.0.0/16 && ip4.dst == 10.16.0.0/16)"),
				drop("d:private-ip6", "ip6 && !(ip6.src == fd00:10:16::/64 && ip6.dst == {fd00:10:16::/64, fd00:20::/64}) && !(ip6.src == fd00:20::/64 && ip6.dst == fd00:10:16::/64)"),
				hosts("d:hosts-ip4", "ip4.src == 100.64.0.0/16"),
			}},
		{"IPv6 only with an IPv4 allowed subnet: ip4 all dropped, no host allow of the other family",
			Request{Subnet: "v6", Private: true, CIDRs: prefixes("fd00:42::/64"), Allow: prefixes("10.16.0.0/16"), Hosts: join},
			[]northbound.ACLRule{
				drop("v6:private-ip4", "ip4"),
				drop("v6:private-ip6", "ip6 && !(ip6.src == fd00:42::/64 && ip6.dst == fd00:42::/64)"),
			}},
		{"allowSubnets naming the subnet itself adds nothing",
			Request{Subnet: "p", Private: true, CIDRs: prefixes("10.69.0.0/16"), Allow: prefixes("10.69.0.0/16")},
			[]northbound.ACLRule{
				drop("p:private-ip4", "ip4 && !(ip4.src == 10.69.0.0/16 && ip4.dst == 10.69.0.0/16)"),
				drop("p:private-ip6", "ip6"),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Build(tt.req)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Build =\n%v\nwant\n%v", got, tt.want)
			}
			spec := northbound.SwitchACLsSpec{Switch: tt.req.Subnet, Owner: Owner(tt.req.Subnet), ACLs: got}
			if err := spec.Validate(); err != nil {
				t.Fatalf("rules do not validate: %v", err)
			}
		})
	}
}

// TestPriorities: the isolation drop sits above every NetworkPolicy ACL, so no policy allow
// can open a private subnet, and it is the only rule between the host allow and the policies.
func TestPriorities(t *testing.T) {
	if DropPriority <= netpol.AllowPriority || DropPriority <= netpol.DenyPriority {
		t.Fatalf("drop priority %d must be above the policies' %d and %d", DropPriority, netpol.DenyPriority, netpol.AllowPriority)
	}
	if HostsPriority <= DropPriority || HostsPriority > 32767 {
		t.Fatalf("host allow priority %d must be above the drop %d and within OVN's range", HostsPriority, DropPriority)
	}
}
