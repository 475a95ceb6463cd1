package netpol

import (
	"fmt"
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// peers is what a rule's from (or to) list resolves to.
type peers struct {
	all       bool  // an empty list: every address
	selectors bool  // the list has pod or namespace selectors (an address set, maybe empty)
	pods      []Pod // the selectors' pods, each once
	blocks    []block
}

// block is an ipBlock: cidr minus the excepted prefixes.
type block struct {
	cidr   netip.Prefix
	except []netip.Prefix
}

func (b block) contains(ip netip.Addr) bool {
	if !b.cidr.Contains(ip) {
		return false
	}
	for _, e := range b.except {
		if e.Contains(ip) {
			return false
		}
	}
	return true
}

// selector converts a label selector; a nil one selects what unset means (everything
// inside a peer that has the other selector).
func selector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(s)
}

// resolvePeers resolves the peers of a rule of a policy in namespace ns. Peers it cannot
// read are left out (they allow nothing) and reported.
func (c Cluster) resolvePeers(ns string, list []networkingv1.NetworkPolicyPeer) (peers, []string) {
	if len(list) == 0 {
		return peers{all: true}, nil
	}
	var out peers
	var problems []string
	seen := map[string]bool{}
	for i, p := range list {
		if p.IPBlock != nil {
			b, err := parseBlock(p.IPBlock)
			if err != nil {
				problems = append(problems, fmt.Sprintf("peer %d: %v: it allows nothing", i, err))
				continue
			}
			out.blocks = append(out.blocks, b)
			continue
		}
		out.selectors = true
		pods, err := c.peerPods(ns, p)
		if err != nil {
			problems = append(problems, fmt.Sprintf("peer %d: %v: it allows nothing", i, err))
			continue
		}
		for _, pod := range pods {
			if k := pod.Namespace + "/" + pod.Name; !seen[k] && !pod.HostNetwork {
				seen[k] = true
				out.pods = append(out.pods, pod)
			}
		}
	}
	return out, problems
}

// peerPods returns the pods a selector peer selects: podSelector alone in the policy's
// namespace, namespaceSelector alone every pod of the matching namespaces, both together
// the matching pods of the matching namespaces.
func (c Cluster) peerPods(ns string, p networkingv1.NetworkPolicyPeer) ([]Pod, error) {
	podSel, err := selector(p.PodSelector)
	if err != nil {
		return nil, fmt.Errorf("pod selector: %w", err)
	}
	namespaces := []string{ns}
	if p.NamespaceSelector != nil {
		nsSel, err := selector(p.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("namespace selector: %w", err)
		}
		namespaces = c.namespaces(nsSel)
	}
	var out []Pod
	for _, n := range namespaces {
		out = append(out, c.selectPods(n, podSel)...)
	}
	return out, nil
}

func parseBlock(b *networkingv1.IPBlock) (block, error) {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return block{}, fmt.Errorf("ipBlock cidr %q: %w", b.CIDR, err)
	}
	out := block{cidr: cidr.Masked()}
	for _, e := range b.Except {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return block{}, fmt.Errorf("ipBlock except %q: %w", e, err)
		}
		out.except = append(out.except, p.Masked())
	}
	return out, nil
}

// candidates are the pods traffic to (or from) these peers may reach: the selected pods and
// the pods whose addresses an ipBlock covers. Named ports resolve against them.
func (p peers) candidates(c Cluster) []Pod {
	if p.all {
		return c.Pods
	}
	out := append([]Pod(nil), p.pods...)
	seen := map[string]bool{}
	for _, pod := range out {
		seen[pod.Namespace+"/"+pod.Name] = true
	}
	for _, pod := range c.Pods {
		if seen[pod.Namespace+"/"+pod.Name] || pod.HostNetwork {
			continue
		}
		for _, ip := range pod.IPs {
			if p.inBlocks(ip) {
				out = append(out, pod)
				break
			}
		}
	}
	return out
}

func (p peers) inBlocks(ip netip.Addr) bool {
	for _, b := range p.blocks {
		if b.contains(ip) {
			return true
		}
	}
	return false
}
