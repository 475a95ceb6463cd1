package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/podqos"
	"github.com/edgeovn/edgeovn/e2e/iperf"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// qosPod is a pod of a QoS test: its object and its sandbox.
type qosPod struct {
	pod *corev1.Pod
	sb  *podsim.Sandbox
}

func startQoSPod(ctx context.Context, t *testing.T, e *env, name string, annotations map[string]string) qosPod {
	t.Helper()
	pod, err := e.kubelet.CreatePod(ctx, "default", name, annotations)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := e.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatal(err)
	}
	return qosPod{pod: pod, sb: sb}
}

// annotate sets (or, with nil, removes) annotations of the pod.
func annotate(ctx context.Context, t *testing.T, e *env, p qosPod, kv map[string]*string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": kv}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.kubelet.Kube.CoreV1().Pods(p.pod.Namespace).Patch(ctx, p.pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func str(s string) *string { return &s }

// egressQdisc is tc's listing of the pod's own interface (its egress).
func egressQdisc(ctx context.Context, t *testing.T, p qosPod) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", p.sb.NetnsName(), "tc", "qdisc", "show", "dev", "eth0").CombinedOutput()
	if err != nil {
		t.Fatalf("tc in %s: %v\n%s", p.pod.Name, err, out)
	}
	return string(out)
}

func measure(ctx context.Context, t *testing.T, from, to qosPod, udpMbit float64) float64 {
	t.Helper()
	res, err := iperf.Run(ctx, iperf.Request{ClientNetns: from.sb.NetnsName(), ServerNetns: to.sb.NetnsName(),
		Server: to.sb.IP(), Seconds: 5, UDPMbit: udpMbit})
	if err != nil {
		t.Fatal(err)
	}
	return res.Mbit
}

// checkLimited asserts a stream held to limit. Robust on a loaded machine: the upper bound
// is the limiter's (load can slow a stream, never push it past a shaper), and the lower
// bound is generous because the rates shaped here are a small fraction of what this rig
// carries unshaped even on 2 busy cores (hundreds of Mbit/s), so the shaper, not the CPU,
// decides the rate.
func checkLimited(t *testing.T, what string, got, limit float64) {
	t.Helper()
	t.Logf("%s: %.2f Mbit/s (limit %g)", what, got, limit)
	if got > limit*1.15 || got < limit*0.7 {
		t.Errorf("%s: %.2f Mbit/s, want %g Mbit/s (at most +15%%, at least -30%%)", what, got, limit)
	}
}

// checkUnlimited asserts a stream well above a limit that must not apply to it.
func checkUnlimited(t *testing.T, what string, got, limit float64) {
	t.Helper()
	t.Logf("%s: %.2f Mbit/s (not limited; a limit of %g applies elsewhere)", what, got, limit)
	if got < limit*3 {
		t.Errorf("%s: %.2f Mbit/s, want unlimited (well above %g)", what, got, limit)
	}
}

// TestPodQoSRates: Kube-OVN's ingress_rate and egress_rate limit exactly the direction they
// name from the pod's point of view, TCP and UDP alike, set at ADD or while the pod runs.
func TestPodQoSRates(t *testing.T) {
	e, ctx := startNode(t)
	a := startQoSPod(ctx, t, e, "qos-a", nil)
	b := startQoSPod(ctx, t, e, "qos-b", map[string]string{podqos.IngressRate: "10"})

	checkLimited(t, "A->B TCP, B ingress_rate 10 (at ADD)", measure(ctx, t, a, b, 0), 10)
	checkLimited(t, "A->B UDP offered at 50, B ingress_rate 10", measure(ctx, t, a, b, 50), 10)
	checkUnlimited(t, "B->A TCP, B's egress", measure(ctx, t, b, a, 0), 10)

	annotate(ctx, t, e, b, map[string]*string{podqos.IngressRate: nil})
	annotate(ctx, t, e, a, map[string]*string{podqos.EgressRate: str("5")})
	eventually(ctx, t, "A's egress shaped", func() bool { return strings.Contains(egressQdisc(ctx, t, a), "rate 5Mbit") })
	checkLimited(t, "A->B TCP, A egress_rate 5 (while running)", measure(ctx, t, a, b, 0), 5)
	checkLimited(t, "A->B UDP offered at 50, A egress_rate 5", measure(ctx, t, a, b, 50), 5)
	checkUnlimited(t, "B->A TCP, A's ingress", measure(ctx, t, b, a, 0), 5)
}
