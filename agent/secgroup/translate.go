package secgroup

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Member is a pod that names the group and holds a port.
type Member struct {
	Port string // "<pod>.<namespace>"
	IPs  []netip.Addr
}

// Group is what Rules reads.
type Group struct {
	Name string
	Spec kubeovn.SecurityGroupSpec
	// Exists says whether a SecurityGroup of that name exists (a rule's remoteSecurityGroup).
	Exists func(name string) bool
	// Hosts are the nodes' join networks: always let in (kubelet probes).
	Hosts []netip.Prefix
}

// direction is how a rule direction maps to OVN.
type direction struct {
	short  string            // "in", "eg": in ACL names
	field  string            // "ingressRules"
	acl    nbdb.ACLDirection // to-lport for ingress, from-lport for egress
	port   string            // the member's side: "outport" or "inport"
	remote string            // the remote's address field: "src" or "dst"
	local  string
}

var (
	ingress = direction{"in", "ingressRules", nbdb.ACLDirectionToLport, "outport", "src", "dst"}
	egress  = direction{"eg", "egressRules", nbdb.ACLDirectionFromLport, "inport", "dst", "src"}
)

// Rules are the ACLs of the group's port group, or an error naming the first field edgeovn
// refuses (kubeovn.ErrInvalidSecurityGroup, or ErrRemoteNotFound).
func Rules(g Group) ([]northbound.ACLRule, error) {
	if g.Spec.Tier != 0 {
		return nil, fmt.Errorf("%w: tier %d: OVN 23.03 has no ACL tiers, only tier 0 is served", kubeovn.ErrInvalidSecurityGroup, g.Spec.Tier)
	}
	acls := Fence(g.Name, g.Hosts)
	pg := PortGroupName(g.Name)
	for _, d := range []direction{ingress, egress} {
		if g.Spec.AllowSameGroupTraffic {
			for _, v6 := range []bool{false, true} {
				ip := ipField(v6)
				acls = append(acls, northbound.ACLRule{Direction: d.acl, Priority: SameGroupPriority, Action: nbdb.ACLActionAllowRelated,
					Match: fmt.Sprintf("%s == @%s && %s && %s.%s == $%s", d.port, pg, ip, ip, d.remote, AddressSetName(g.Name, v6)),
					Name:  aclName(fmt.Sprintf("sg/%s:%s-same", g.Name, d.short))})
			}
		}
		rules := g.Spec.IngressRules
		if d == egress {
			rules = g.Spec.EgressRules
		}
		for i, r := range rules {
			field := fmt.Sprintf("%s[%d]", d.field, i)
			rule, err := kubeovn.ParseSgRule(field, r)
			if err != nil {
				return nil, err
			}
			if rule.RemoteGroup != "" && (g.Exists == nil || !g.Exists(rule.RemoteGroup)) {
				return nil, fmt.Errorf("%w: %s.remoteSecurityGroup: security group %s not found: refused until it exists", ErrRemoteNotFound, field, rule.RemoteGroup)
			}
			acl := ruleACL(d, pg, rule)
			acl.Name = aclName(fmt.Sprintf("sg/%s:%s%d", g.Name, d.short, i))
			if acls, err = add(acls, acl, field); err != nil {
				return nil, err
			}
		}
	}
	return acls, nil
}

// ErrRemoteNotFound marks a rule whose remoteSecurityGroup does not exist.
var ErrRemoteNotFound = errors.New("remote security group not found")

// Fence is what a group whose rules are refused and were never applied keeps its members
// behind: the host allow, neighbour discovery and the drop, and nothing else.
func Fence(group string, hosts []netip.Prefix) []northbound.ACLRule {
	pg := PortGroupName(group)
	var acls []northbound.ACLRule
	for _, h := range hosts {
		ip := ipField(h.Addr().Is6())
		acls = append(acls, northbound.ACLRule{Direction: ingress.acl, Priority: HostsPriority, Action: nbdb.ACLActionAllowRelated,
			Match: fmt.Sprintf("outport == @%s && %s.src == %s", pg, ip, prefix(h)), Name: aclName("sg/" + group + ":hosts")})
	}
	nd := map[direction]string{ingress: "{130, 134, 135, 136}", egress: "{130, 133, 135, 136}"}
	for _, d := range []direction{ingress, egress} {
		acls = append(acls,
			northbound.ACLRule{Direction: d.acl, Priority: BasePriority, Action: nbdb.ACLActionAllowRelated,
				Match: fmt.Sprintf("%s == @%s && icmp6.type == %s && icmp6.code == 0 && ip.ttl == 255", d.port, pg, nd[d]),
				Name:  aclName("sg/" + group + ":" + d.short + "-nd")},
			northbound.ACLRule{Direction: d.acl, Priority: DropPriority, Action: nbdb.ACLActionDrop,
				Match: fmt.Sprintf("%s == @%s && ip", d.port, pg), Name: aclName("sg/" + group + ":" + d.short + "-drop")})
	}
	return acls
}

// ruleACL is a rule's ACL, its match as Kube-OVN writes it.
func ruleACL(d direction, pg string, r kubeovn.SgRule) northbound.ACLRule {
	ip := ipField(r.IPv6)
	m := []string{fmt.Sprintf("%s == @%s", d.port, pg), ip}
	if r.RemoteGroup != "" {
		m = append(m, fmt.Sprintf("%s.%s == $%s", ip, d.remote, AddressSetName(r.RemoteGroup, r.IPv6)))
	} else {
		m = append(m, fmt.Sprintf("%s.%s == %s", ip, d.remote, prefix(r.Remote)))
	}
	if r.Local.IsValid() {
		m = append(m, fmt.Sprintf("%s.%s == %s", ip, d.local, prefix(r.Local)))
	}
	switch r.Protocol {
	case kubeovn.SgProtocolICMP:
		m = append(m, map[bool]string{false: "icmp4", true: "icmp6"}[r.IPv6])
	case kubeovn.SgProtocolTCP, kubeovn.SgProtocolUDP:
		m = append(m, fmt.Sprintf("%d <= %s.dst <= %d", r.Ports[0], r.Protocol, r.Ports[1]))
		if r.Local.IsValid() {
			m = append(m, fmt.Sprintf("%d <= %s.src <= %d", r.SourcePorts[0], r.Protocol, r.SourcePorts[1]))
		}
	}
	action := nbdb.ACLActionDrop
	if r.Allow {
		action = nbdb.ACLActionAllowRelated
	}
	return northbound.ACLRule{Direction: d.acl, Priority: RulePriority(r.Priority), Match: strings.Join(m, " && "), Action: action}
}

// add appends acl unless an ACL of the same direction, priority and match is there: the same
// action is one rule written twice; another action is refused (OVN would pick either).
func add(acls []northbound.ACLRule, acl northbound.ACLRule, field string) ([]northbound.ACLRule, error) {
	i := slices.IndexFunc(acls, func(a northbound.ACLRule) bool {
		return a.Direction == acl.Direction && a.Priority == acl.Priority && a.Match == acl.Match
	})
	switch {
	case i < 0:
		return append(acls, acl), nil
	case acls[i].Action == acl.Action:
		return acls, nil
	}
	return nil, fmt.Errorf("%w: %s: the same traffic at the same priority as another rule with the other policy (OVN would pick either)",
		kubeovn.ErrInvalidSecurityGroup, field)
}

// Rows are the group's rows: its port group of members with acls, its address sets.
func Rows(group string, members []Member, acls []northbound.ACLRule) northbound.ACLGroupSpec {
	ports := make([]string, 0, len(members))
	var v4, v6 []netip.Prefix
	for _, m := range members {
		ports = append(ports, m.Port)
		for _, ip := range m.IPs {
			p := netip.PrefixFrom(ip, ip.BitLen())
			if ip.Is6() {
				v6 = append(v6, p)
			} else {
				v4 = append(v4, p)
			}
		}
	}
	slices.Sort(ports)
	sortPrefixes := func(ps []netip.Prefix) []netip.Prefix {
		slices.SortFunc(ps, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
		return slices.Compact(ps)
	}
	return northbound.ACLGroupSpec{Owner: Owner(group),
		PortGroups: []northbound.PortGroupACLs{{Name: PortGroupName(group), Ports: slices.Compact(ports), ACLs: acls}},
		AddressSets: []northbound.AddressSetSpec{{Name: AddressSetName(group, false), Addresses: sortPrefixes(v4)},
			{Name: AddressSetName(group, true), Addresses: sortPrefixes(v6)}}}
}

func ipField(v6 bool) string {
	if v6 {
		return "ip6"
	}
	return "ip4"
}

// prefix prints an address alone, a network as a CIDR.
func prefix(p netip.Prefix) string {
	if p.Bits() == p.Addr().BitLen() {
		return p.Addr().String()
	}
	return p.String()
}
