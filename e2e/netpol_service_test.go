package e2e

import (
	"context"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkServiceDNAT: policy applies to a Service's backend after the load balancer's DNAT.
// x/a's egress allows y/b only: through y/b's ClusterIP x/a connects, through z/c's it does
// not; x/b, whom no policy selects, reaches both. With the policy turned to z/c the answers
// swap. Then an ingress policy on y/b that admits only x/a fences y/b's ClusterIP from x/c.
func (w *world) checkServiceDNAT(ctx context.Context, t *testing.T) {
	t.Helper()
	toYB, toZC := w.serviceTo(ctx, t, "to-yb", "y/b"), w.serviceTo(ctx, t, "to-zc", "z/c")
	only := func(ns, pod string) *networkingv1.NetworkPolicy {
		np := egress(pol("x", "pod", "a"), to(ports(num(tcpP, 80)), both(lbl("ns", ns), lbl("pod", pod))))
		np.Name = "svc-egress"
		return np
	}
	web := target{corev1.ProtocolTCP, 80}
	w.setPolicies(ctx, t, []*networkingv1.NetworkPolicy{only("y", "b")})
	w.expectVIP(ctx, t, "x/a", toYB, web, true, "egress allows y/b: its ClusterIP")
	w.expectVIP(ctx, t, "x/a", toZC, web, false, "egress allows y/b only: z/c's ClusterIP")
	w.expectVIP(ctx, t, "x/b", toZC, web, true, "x/b is not fenced: z/c's ClusterIP")
	w.setPolicies(ctx, t, []*networkingv1.NetworkPolicy{only("z", "c")})
	w.expectVIP(ctx, t, "x/a", toZC, web, true, "egress turned to z/c: its ClusterIP")
	w.expectVIP(ctx, t, "x/a", toYB, web, false, "egress turned to z/c: y/b's ClusterIP")

	in := ingress(pol("y", "pod", "b"), from(nil, both(lbl("ns", "x"), lbl("pod", "a"))))
	in.Name = "svc-ingress"
	w.setPolicies(ctx, t, []*networkingv1.NetworkPolicy{in})
	w.expectVIP(ctx, t, "x/a", toYB, web, true, "y/b admits x/a: through its ClusterIP")
	w.expectVIP(ctx, t, "x/c", toYB, web, false, "y/b admits x/a only: x/c through its ClusterIP")
	w.setPolicies(ctx, t, nil)
	w.expectVIP(ctx, t, "x/c", toYB, web, true, "no policy: x/c through y/b's ClusterIP")
	for _, name := range []string{"to-yb", "to-zc"} {
		if err := w.env.kubelet.Kube.CoreV1().Services("default").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// expectVIP waits until a probe from the pod to the virtual IP gives want, which must then
// hold for three probes in a row.
func (w *world) expectVIP(ctx context.Context, t *testing.T, from string, vip netip.Addr, tg target, want bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for streak := 0; streak < 3; {
		if probe(ctx, w.netns[from], vip, tg, retryTimeout) == want {
			streak++
			continue
		}
		streak = 0
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s -> %s %s: got %v, want %v\n%s", what, from, vip, tg, !want, want, w.nbState(ctx))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// serviceTo creates a selector-less ClusterIP Service in default (TCP 80 and UDP 80) whose
// EndpointSlice names the one pod, and returns its ClusterIP once OVN load-balances it.
func (w *world) serviceTo(ctx context.Context, t *testing.T, name, podKey string) netip.Addr {
	t.Helper()
	var dst *tpod
	for _, p := range w.pods {
		if p.key() == podKey {
			dst = p
		}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "tcp", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP},
			{Name: "udp", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolUDP}}}}
	kube := w.env.kubelet.Kube
	out, err := kube.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
		Labels: map[string]string{discoveryv1.LabelServiceName: name}}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: new("tcp"), Port: new(int32(80)), Protocol: new(corev1.ProtocolTCP)},
			{Name: new("udp"), Port: new(int32(80)), Protocol: new(corev1.ProtocolUDP)}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{dst.ip.String()}, NodeName: new(node)}}}
	if _, err := kube.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create endpoints of %s: %v", name, err)
	}
	vip := netip.MustParseAddr(out.Spec.ClusterIP)
	w.expectVIP(ctx, t, "z/a", vip, target{corev1.ProtocolTCP, 80}, true, "service "+name+" answers")
	return vip
}
