package e2e

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/images"
	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// TestRealNodeHostNetworkHostname: a hostNetwork pod on the real node shares the host's
// network namespace (a pod reaches it at the node's address) and has the node's name as its
// hostname, as on a real host whose node name is its hostname. The upstream e2e tests expect
// a hostNetwork endpoint to answer with its node's name (the dual-stack "service endpoints
// using hostNetwork" check got this machine's hostname before the rig gave containerd a UTS
// namespace named after the node).
func TestRealNodeHostNetworkHostname(t *testing.T) {
	e, ctx := startRealNode(t)
	a := e.runPod(ctx, t, "a")
	spec := realpods.TestServerPod("default", "hostnet", node)
	spec.Spec.HostNetwork = true
	if _, err := realpods.Create(ctx, e.rig.Kube(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := realpods.Wait(ctx, e.rig.Kube(), "default", "hostnet", func(p *corev1.Pod) bool { return realpods.Running(p) && realpods.Ready(p) }); err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	to := netip.AddrPortFrom(e.rig.NodeIP, images.TestServerPort)
	ans, err := e.client.Dial(ctx, realpods.DialRequest{From: podIP(t, a), Proto: "tcp", To: to})
	if err != nil {
		t.Fatalf("pod a to the hostNetwork pod at %s: %v", to, err)
	}
	if ans.Server != node {
		t.Fatalf("the hostNetwork pod at %s answered as %q, want the node's name %q", to, ans.Server, node)
	}
}
