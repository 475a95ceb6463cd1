package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestNetworkPolicyIPv6: in a dual-stack cluster NetworkPolicy fences IPv6 as it fences IPv4.
// An ingress ipBlock of the IPv6 pod network with an except admits friend over IPv6 and
// neither stranger (excepted) nor friend over IPv4 (no IPv4 block); the host (kubelet's
// probes) always gets in, over both families. A pod selector peer admits friend over both
// families and not stranger. An egress ipBlock lets friend reach an IPv6-only outside network
// and not the server.
func TestNetworkPolicyIPv6(t *testing.T) {
	env, ctx := startNodeFlags(t, "--cluster-cidr="+dualClusterCIDR)
	join6 := hostJoin6(ctx, t, env, nodeJoin(ctx, t, env).IPs)
	labelled := func(kv ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels = map[string]string{kv[0]: kv[1]} }
	}
	server := runPodIn(ctx, t, env, "default", "server", labelled("app", "server"))
	friend := runPodIn(ctx, t, env, "default", "friend", labelled("role", "friend"))
	stranger := runPodIn(ctx, t, env, "default", "stranger", labelled("role", "stranger"))
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: server.Netns, Port: 8080, Name: "server"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	server4, server6 := netip.AddrPortFrom(server.IP(), 8080), netip.AddrPortFrom(podIP6(t, server), 8080)
	pols := env.kubelet.Kube.NetworkingV1().NetworkPolicies("default")
	p := policy6{ctx: ctx, t: t, env: env}

	p.set("server-in", networkingv1.NetworkPolicySpec{PodSelector: *lbl("app", "server"),
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
			block(v6ClusterCIDR, netip.PrefixFrom(podIP6(t, stranger), 128).String())}}}})
	// Each policy's first check is one that differs from before it, so it waits for the policy.
	p.expect(stranger.Netns, server6, false, "ipBlock except stranger's IPv6 address: stranger over IPv6")
	p.expect(friend.Netns, server4, false, "IPv6 ipBlock only: friend over IPv4")
	p.expect(friend.Netns, server6, true, "ipBlock of the IPv6 pod network: friend over IPv6")
	p.expect(env.rig.NetnsPath, server6, true, "the host (probes) over IPv6, from "+join6.String())
	p.expect(env.rig.NetnsPath, server4, true, "the host (probes) over IPv4")

	p.set("server-in", networkingv1.NetworkPolicySpec{PodSelector: *lbl("app", "server"),
		Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{pods("role", "friend")}}}})
	p.expect(friend.Netns, server4, true, "pod peer role=friend: friend over IPv4")
	p.expect(friend.Netns, server6, true, "pod peer role=friend: friend over IPv6")
	p.expect(stranger.Netns, server6, false, "pod peer role=friend: stranger over IPv6")

	if err := pols.Delete(ctx, "server-in", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	outside := addOutside6(ctx, t, env)
	out, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: outside, Port: 8080, Name: "outside"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	p.set("friend-out", networkingv1.NetworkPolicySpec{PodSelector: *lbl("role", "friend"),
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress:      []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{block(outsideV6 + "/128")}}}})
	p.expect(friend.Netns, server6, false, "egress ipBlock of the IPv6 outside only: friend to the server over IPv6")
	p.expect(friend.Netns, netip.AddrPortFrom(netip.MustParseAddr(outsideV6), 8080), true, "egress ipBlock of the IPv6 outside: friend to it")
	p.expect(stranger.Netns, server6, true, "stranger is not fenced")
}

// policy6 creates and replaces NetworkPolicies in default and probes what they let through.
type policy6 struct {
	ctx context.Context
	t   *testing.T
	env *env
}

func (p policy6) set(name string, spec networkingv1.NetworkPolicySpec) {
	p.t.Helper()
	pols := p.env.kubelet.Kube.NetworkingV1().NetworkPolicies("default")
	if err := pols.Delete(p.ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		p.t.Fatal(err)
	}
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Spec: spec}
	if _, err := pols.Create(p.ctx, np, metav1.CreateOptions{}); err != nil {
		p.t.Fatalf("create policy %s: %v", name, err)
	}
}

// expect waits until a TCP request from netns to addr is answered (want) or not, which must
// then hold three times in a row.
func (p policy6) expect(netns string, addr netip.AddrPort, want bool, what string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for streak := 0; streak < 3; {
		a, _ := podsim.Send(p.ctx, podsim.SendRequest{Netns: netns, Protocol: corev1.ProtocolTCP, Addr: addr, Timeout: 700 * time.Millisecond})
		if (a.Server != "") == want {
			streak++
			continue
		}
		streak = 0
		if time.Now().After(deadline) {
			acls, _ := p.env.rig.Run(p.ctx, "ovn-nbctl", "--db="+p.env.rig.NBEndpoint, "--columns=match,action", "list", "ACL")
			sets, _ := p.env.rig.Run(p.ctx, "ovn-nbctl", "--db="+p.env.rig.NBEndpoint, "--columns=name,addresses", "list", "Address_Set")
			p.t.Fatalf("%s: %s answered %v, want %v\n%s\n%s", what, addr, !want, want, acls, strings.TrimSpace(fmt.Sprint(string(sets))))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
