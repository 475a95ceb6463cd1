package e2e

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRealNodeIPv6Probe: in an IPv6-only cluster the real kubelet probes a pod at its IPv6
// address (the pod's only one) from the host, through ovn0's IPv6 join address; the probe
// passes although a default-deny NetworkPolicy fences the pod (the hosts' IPv6 join addresses
// are let in), and a probe of a closed port still fails, so passing is not the default.
func TestRealNodeIPv6Probe(t *testing.T) {
	e, ctx := startRealNodeFlags(t, "--cluster-cidr="+v6ClusterCIDR)
	deny := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "deny-in"},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	if _, err := e.rig.Kube().NetworkingV1().NetworkPolicies("default").Create(ctx, deny, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a := e.runPod(ctx, t, "a") // Ready: the kubelet's readiness probe passed
	if ip := podIP(t, a); !ip.Is6() || len(a.Status.PodIPs) != 1 {
		t.Fatalf("pod a: podIPs %v, want one IPv6 address", a.Status.PodIPs)
	}
	t.Logf("pod a Ready at %s behind a default-deny policy", podIP(t, a))
	e.checkProbe(ctx, t)
}
