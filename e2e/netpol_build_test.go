package e2e

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Small builders that keep the truth table's cases one line each.

type (
	peer   = networkingv1.NetworkPolicyPeer
	nport  = networkingv1.NetworkPolicyPort
	inRule = networkingv1.NetworkPolicyIngressRule
	egRule = networkingv1.NetworkPolicyEgressRule
)

// pol is a policy in ns selecting the pods with the labels kv ("pod", "a"); none: all.
func pol(ns string, kv ...string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{PodSelector: *lbl(kv...)}}
}

func lbl(kv ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{}
	for i := 0; i+1 < len(kv); i += 2 {
		if s.MatchLabels == nil {
			s.MatchLabels = map[string]string{}
		}
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func expr(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

// ingress makes the policy an Ingress policy with these rules (none: deny all ingress).
func ingress(np *networkingv1.NetworkPolicy, rules ...inRule) *networkingv1.NetworkPolicy {
	np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
	np.Spec.Ingress = append(np.Spec.Ingress, rules...)
	return np
}

// egress makes the policy an Egress policy with these rules (none: deny all egress).
func egress(np *networkingv1.NetworkPolicy, rules ...egRule) *networkingv1.NetworkPolicy {
	np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
	np.Spec.Egress = append(np.Spec.Egress, rules...)
	return np
}

func from(ports []nport, peers ...peer) inRule { return inRule{From: peers, Ports: ports} }
func to(ports []nport, peers ...peer) egRule   { return egRule{To: peers, Ports: ports} }

func pods(kv ...string) peer { return peer{PodSelector: lbl(kv...)} }
func nss(kv ...string) peer  { return peer{NamespaceSelector: lbl(kv...)} }
func both(ns, pod *metav1.LabelSelector) peer {
	return peer{NamespaceSelector: ns, PodSelector: pod}
}
func block(cidr string, except ...string) peer {
	return peer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: except}}
}

func ports(ps ...nport) []nport { return ps }

func num(proto corev1.Protocol, port int32) nport {
	p := intstr.FromInt32(port)
	return nport{Protocol: &proto, Port: &p}
}

func span(proto corev1.Protocol, port, end int32) nport {
	p := num(proto, port)
	p.EndPort = &end
	return p
}

func named(proto corev1.Protocol, name string) nport {
	p := intstr.FromString(name)
	return nport{Protocol: &proto, Port: &p}
}

func anyPort(proto corev1.Protocol) nport { return nport{Protocol: &proto} }

const (
	tcpP  = corev1.ProtocolTCP
	udpP  = corev1.ProtocolUDP
	sctpP = corev1.ProtocolSCTP
)
