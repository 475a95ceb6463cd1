package subnetacl

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Priorities of a private Subnet's ACLs: above every NetworkPolicy ACL (netpol's 1000 and
// 1001), so a policy can neither open the Subnet nor be undone by it.
const (
	// Above every SecurityGroup ACL (package secgroup, up to 18500) and every policy's.
	DropPriority  = 18600
	HostsPriority = 18700
)

// Request is what the isolation of one Subnet depends on.
type Request struct {
	Subnet  string
	Private bool
	CIDRs   []netip.Prefix // the Subnet's, one per family
	Allow   []netip.Prefix // spec.allowSubnets
	Hosts   []netip.Prefix // the join network(s) the nodes' ovn0 addresses come from
	// ACLs and AllowEWTraffic are spec.acls and spec.allowEWTraffic (custom.go), checked by
	// CheckACLs.
	ACLs           []kubeovn.ACL
	AllowEWTraffic bool
}

// Owner is the owner tag of the Subnet's ACLs: the Subnet's own, so they go with its switch.
func Owner(subnet string) northbound.OwnerRef {
	return northbound.OwnerRef{Kind: ovn.KindSubnet, Name: subnet}
}

// family is an IP family as OVN matches it.
type family struct {
	field string
	is4   bool
}

var families = []family{{"ip4", true}, {"ip6", false}}

// Build returns the Subnet's ACLs, sorted by priority, match and direction: the isolation of
// a private Subnet and the Subnet's own acls (custom.go).
func Build(r Request) []northbound.ACLRule {
	out := append(isolation(r), custom(r)...)
	slices.SortFunc(out, func(a, b northbound.ACLRule) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		if c := strings.Compare(a.Match, b.Match); c != 0 {
			return c
		}
		return strings.Compare(a.Direction, b.Direction)
	})
	return out
}

// isolation is a private Subnet's rules: none unless it is private.
func isolation(r Request) []northbound.ACLRule {
	if !r.Private {
		return nil
	}
	var out []northbound.ACLRule
	for _, f := range families {
		own := ofFamily(r.CIDRs, f)
		if len(own) == 0 {
			out = append(out, rule(r.Subnet, DropPriority, f.field, nbdb.ACLActionDrop, "private-"+f.field))
			continue
		}
		allow := slices.DeleteFunc(ofFamily(r.Allow, f), func(p netip.Prefix) bool { return slices.Contains(own, p) })
		out = append(out, rule(r.Subnet, DropPriority, dropMatch(f, own, allow), nbdb.ACLActionDrop, "private-"+f.field))
		if hosts := ofFamily(r.Hosts, f); len(hosts) > 0 {
			out = append(out, rule(r.Subnet, HostsPriority, fmt.Sprintf("%s.src == %s", f.field, set(hosts)),
				nbdb.ACLActionAllowRelated, "hosts-"+f.field))
		}
	}
	return out
}

// dropMatch is "a packet of family f the Subnet does not allow": neither within its CIDRs,
// nor between them and the allowed CIDRs.
func dropMatch(f family, own, allow []netip.Prefix) string {
	m := fmt.Sprintf("%s && !(%s.src == %s && %s.dst == %s)", f.field, f.field, set(own), f.field, set(append(slices.Clone(own), allow...)))
	if len(allow) > 0 {
		m += fmt.Sprintf(" && !(%s.src == %s && %s.dst == %s)", f.field, set(allow), f.field, set(own))
	}
	return m
}

func rule(subnet string, priority int, match string, action nbdb.ACLAction, what string) northbound.ACLRule {
	return northbound.ACLRule{Direction: nbdb.ACLDirectionToLport, Priority: priority, Match: match, Action: action, Name: name(subnet, what)}
}

// name is an ACL's name in ovn-controller's log: the Subnet's and what the rule is, cut to
// OVN's limit.
func name(subnet, what string) string {
	n := subnet + ":" + what
	if len(n) > northbound.MaxACLName {
		n = n[:northbound.MaxACLName]
	}
	return n
}

// ofFamily returns the prefixes of family f, masked, sorted and unique.
func ofFamily(ps []netip.Prefix, f family) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range ps {
		if p.IsValid() && p.Addr().Is4() == f.is4 {
			out = append(out, p.Masked())
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(out)
}

// set is one prefix, or OVN's {a, b} for several.
func set(ps []netip.Prefix) string {
	ps = ofFamilyAny(ps)
	if len(ps) == 1 {
		return ps[0].String()
	}
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// ofFamilyAny sorts and deduplicates prefixes already of one family.
func ofFamilyAny(ps []netip.Prefix) []netip.Prefix {
	if len(ps) == 0 {
		return ps
	}
	return ofFamily(ps, family{is4: ps[0].Addr().Is4()})
}
