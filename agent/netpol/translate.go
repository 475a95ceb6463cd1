package netpol

import (
	"fmt"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Result is one policy's translation.
type Result struct {
	Rows northbound.ACLGroupSpec
	// Ingress and Egress are the policy's types: its selected pods are default-deny there.
	Ingress, Egress bool
	// Selected are the pods the policy selects (and fences).
	Selected []Pod
	// Problems say what of the policy edgeovn cannot express, and what it does instead.
	Problems []string
}

// direction is how a policy direction maps to OVN.
type direction struct {
	short   string            // "in", "eg": in row and ACL names
	acl     nbdb.ACLDirection // to-lport for ingress, from-lport for egress
	port    string            // the selected pod's side: "outport" or "inport"
	peer    string            // the peer's address field: "src" or "dst"
	afterLB bool
}

var (
	ingress = direction{"in", nbdb.ACLDirectionToLport, "outport", "src", false}
	egress  = direction{"eg", nbdb.ACLDirectionFromLport, "inport", "dst", true}
)

// Owner is the owner tag of a policy's rows.
func Owner(namespace, name string) northbound.OwnerRef {
	return northbound.OwnerRef{Kind: ovn.KindNetworkPolicy, Name: namespace + "/" + name}
}

// Translate turns one policy into its rows, given the cluster's pods and namespaces.
func Translate(np *networkingv1.NetworkPolicy, c Cluster) Result {
	t := &translator{c: c, np: np, pg: PortGroupName(np.Namespace, np.Name)}
	var res Result
	res.Ingress, res.Egress = policyTypes(np)
	t.selected, res.Problems = t.selectTargets()
	if res.Ingress {
		for i, r := range np.Spec.Ingress {
			t.rule(ingress, i, r.From, r.Ports)
		}
	}
	if res.Egress {
		for i, r := range np.Spec.Egress {
			t.rule(egress, i, r.To, r.Ports)
		}
	}
	ports := make([]string, len(t.selected))
	for i, p := range t.selected {
		ports[i] = p.portName()
	}
	res.Rows = northbound.ACLGroupSpec{Owner: Owner(np.Namespace, np.Name),
		PortGroups:  []northbound.PortGroupACLs{{Name: t.pg, Ports: ports, ACLs: t.acls}},
		AddressSets: t.sets}
	res.Selected = t.selected
	res.Problems = append(res.Problems, t.problems...)
	return res
}

// policyTypes applies the API's default: Ingress always, Egress when there are egress rules.
func policyTypes(np *networkingv1.NetworkPolicy) (in, eg bool) {
	if len(np.Spec.PolicyTypes) == 0 {
		return true, len(np.Spec.Egress) > 0
	}
	for _, t := range np.Spec.PolicyTypes {
		in = in || t == networkingv1.PolicyTypeIngress
		eg = eg || t == networkingv1.PolicyTypeEgress
	}
	return in, eg
}

// translator accumulates one policy's ACLs and address sets.
type translator struct {
	c        Cluster
	np       *networkingv1.NetworkPolicy
	pg       string
	selected []Pod
	acls     []northbound.ACLRule
	sets     []northbound.AddressSetSpec
	problems []string
}

// selectTargets returns the pods of the policy's namespace its podSelector selects.
func (t *translator) selectTargets() ([]Pod, []string) {
	sel, err := selector(&t.np.Spec.PodSelector)
	if err != nil {
		return nil, []string{fmt.Sprintf("podSelector: %v: the policy selects no pod", err)}
	}
	var out []Pod
	var problems []string
	for _, p := range t.c.selectPods(t.np.Namespace, sel) {
		if p.HostNetwork {
			problems = append(problems, fmt.Sprintf("pod %s uses the host's network: OVN cannot fence it", p.Name))
			continue
		}
		out = append(out, p)
	}
	return out, problems
}

// rule adds the ACLs and address sets of one ingress or egress rule.
func (t *translator) rule(d direction, i int, peerList []networkingv1.NetworkPolicyPeer, portList []networkingv1.NetworkPolicyPort) {
	where := fmt.Sprintf("%s rule %d", map[string]string{"in": "ingress", "eg": "egress"}[d.short], i)
	p, problems := t.c.resolvePeers(t.np.Namespace, peerList)
	ports, portProblems := parsePorts(portList)
	for _, pr := range append(problems, portProblems...) {
		t.problems = append(t.problems, where+": "+pr)
	}
	l3, ok := t.peerClause(d, i, p)
	if !ok {
		return // no peer left: the rule allows nothing
	}
	base := fmt.Sprintf("%s == @%s", d.port, t.pg)
	name := fmt.Sprintf("%s/%s:%s%d", t.np.Namespace, t.np.Name, d.short, i)
	if ports.all || len(ports.numeric) > 0 {
		t.allow(d, name, base, l3, ports.clause())
	}
	for _, np := range ports.named {
		t.namedPort(d, i, np, p, base, l3)
	}
}

// namedPort adds an ACL per number the named port resolves to on the destination pods:
// the selected pods for ingress, the peers' pods for egress.
func (t *translator) namedPort(d direction, i int, np namedPort, p peers, base, l3 string) {
	dest := t.selected
	if d == egress {
		dest, l3 = p.candidates(t.c), "" // the destination set lies inside the peers
	}
	numbers, groups := np.byNumber(dest)
	for _, n := range numbers {
		// Port names are IANA service names (a-z, 0-9, '-'): '_' keeps them apart in OVN names.
		set := fmt.Sprintf("%s.%s%d.%s.%s%d", t.pg, d.short, i, strings.ReplaceAll(np.name, "-", "_"), np.proto, n)
		dst := t.addressSets(set, groups[n], "dst")
		name := fmt.Sprintf("%s/%s:%s%d:%s", t.np.Namespace, t.np.Name, d.short, i, np.name)
		t.allow(d, name, base, l3, dst, fmt.Sprintf("%s.dst == %d", np.proto, n))
	}
}

// peerClause is the match of the rule's peers: "" for every address, ok false for none.
func (t *translator) peerClause(d direction, i int, p peers) (string, bool) {
	if p.all {
		return "", true
	}
	var clauses []string
	if p.selectors {
		clauses = append(clauses, t.addressSets(fmt.Sprintf("%s.%s%d", t.pg, d.short, i), p.pods, d.peer))
	}
	for _, b := range p.blocks {
		f := ip4
		if b.cidr.Addr().Is6() {
			f = ip6
		}
		c := fmt.Sprintf("%s.%s == %s", f.field, d.peer, b.cidr)
		if len(b.except) > 0 {
			ex := make([]string, len(b.except))
			for j, e := range b.except {
				ex[j] = e.String()
			}
			c = fmt.Sprintf("(%s && %s.%s != {%s})", c, f.field, d.peer, strings.Join(ex, ", "))
		}
		clauses = append(clauses, c)
	}
	return or(clauses), len(clauses) > 0
}

// addressSets adds one address set per family holding the pods' addresses and returns the
// match of an address (field "src" or "dst") in them.
func (t *translator) addressSets(name string, pods []Pod, field string) string {
	var clauses []string
	for _, f := range t.c.families() {
		t.sets = append(t.sets, northbound.AddressSetSpec{Name: name + f.suffix, Addresses: prefixes(pods, f)})
		clauses = append(clauses, fmt.Sprintf("%s.%s == $%s%s", f.field, field, name, f.suffix))
	}
	return or(clauses)
}

func (t *translator) allow(d direction, name string, clauses ...string) {
	match := and(clauses)
	for _, a := range t.acls {
		if a.Direction == d.acl && a.Match == match {
			return // two rules allowing the same
		}
	}
	t.acls = append(t.acls, northbound.ACLRule{Direction: d.acl, Priority: AllowPriority, Match: match,
		Action: nbdb.ACLActionAllowRelated, Name: aclName("%s", name), AfterLB: d.afterLB})
}

// or joins clauses with ||, in parentheses when there are several.
func or(clauses []string) string {
	if len(clauses) == 1 {
		return clauses[0]
	}
	return "(" + strings.Join(clauses, " || ") + ")"
}

// and joins the non-empty clauses with &&.
func and(clauses []string) string {
	return strings.Join(slices.DeleteFunc(slices.Clone(clauses), func(s string) bool { return s == "" }), " && ")
}
