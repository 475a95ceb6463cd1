package e2e

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The oracle reads the NetworkPolicy API as its documentation states it, independently of
// edgeovn's translation: a connection passes when the source's egress and the destination's
// ingress both allow it (a pod always reaches itself: that never leaves its namespace). A direction is open for a pod no policy selects for it; otherwise
// the union of the rules of every policy that selects it applies.

// tpod is a pod of the truth table.
type tpod struct {
	ns, name string
	labels   map[string]string
	ip       netip.Addr
	ports    []corev1.ContainerPort
}

func (p *tpod) key() string { return p.ns + "/" + p.name }

// target is what a probe asks for: a protocol and a port number.
type target struct {
	proto corev1.Protocol
	port  int32
}

func (t target) String() string {
	return fmt.Sprintf("%s/%d", strings.ToLower(string(t.proto)), t.port)
}

type oracle struct {
	policies []*networkingv1.NetworkPolicy
	nsLabels map[string]map[string]string
	pods     []*tpod
}

func (o oracle) allowed(src, dst *tpod, t target) bool {
	if src == dst {
		return true // a pod reaches itself inside its own network namespace, never through OVN
	}
	return o.direction(src, networkingv1.PolicyTypeEgress, dst, t) && o.direction(dst, networkingv1.PolicyTypeIngress, src, t)
}

// direction says whether pod (the policies' subject) lets traffic with peer through in
// direction dir; t is resolved against the destination pod.
func (o oracle) direction(pod *tpod, dir networkingv1.PolicyType, peer *tpod, t target) bool {
	selected := false
	for _, np := range o.policies {
		if np.Namespace != pod.ns || !hasType(np, dir) || !matches(&np.Spec.PodSelector, pod.labels) {
			continue
		}
		selected = true
		dest := pod
		if dir == networkingv1.PolicyTypeEgress {
			dest = peer
		}
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range np.Spec.Ingress {
				if o.peersMatch(np.Namespace, r.From, peer) && portsMatch(r.Ports, dest, t) {
					return true
				}
			}
			continue
		}
		for _, r := range np.Spec.Egress {
			if o.peersMatch(np.Namespace, r.To, peer) && portsMatch(r.Ports, dest, t) {
				return true
			}
		}
	}
	return !selected
}

func hasType(np *networkingv1.NetworkPolicy, t networkingv1.PolicyType) bool {
	for _, pt := range np.Spec.PolicyTypes {
		if pt == t {
			return true
		}
	}
	return false
}

func matches(sel *metav1.LabelSelector, l map[string]string) bool {
	s, err := metav1.LabelSelectorAsSelector(sel)
	return err == nil && s.Matches(labels.Set(l))
}

func (o oracle) peersMatch(ns string, peers []networkingv1.NetworkPolicyPeer, p *tpod) bool {
	if len(peers) == 0 {
		return true
	}
	for _, peer := range peers {
		if peer.IPBlock != nil {
			if inBlock(peer.IPBlock, p.ip) {
				return true
			}
			continue
		}
		nsOK := p.ns == ns
		if peer.NamespaceSelector != nil {
			nsOK = matches(peer.NamespaceSelector, o.nsLabels[p.ns])
		}
		podOK := peer.PodSelector == nil || matches(peer.PodSelector, p.labels)
		if nsOK && podOK {
			return true
		}
	}
	return false
}

func inBlock(b *networkingv1.IPBlock, ip netip.Addr) bool {
	if !netip.MustParsePrefix(b.CIDR).Contains(ip) {
		return false
	}
	for _, e := range b.Except {
		if netip.MustParsePrefix(e).Contains(ip) {
			return false
		}
	}
	return true
}

func portsMatch(ports []networkingv1.NetworkPolicyPort, dest *tpod, t target) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		if proto != t.proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.StrVal != "":
			for _, cp := range dest.ports {
				if cp.Name == p.Port.StrVal && cp.Protocol == proto && cp.ContainerPort == t.port {
					return true
				}
			}
		case p.EndPort != nil:
			if t.port >= p.Port.IntVal && t.port <= *p.EndPort {
				return true
			}
		case p.Port.IntVal == t.port:
			return true
		}
	}
	return false
}
