package e2e

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// TestRealNode runs edgeovn under a real kubelet and containerd 2 (as k3s bundles it), on the
// CNI config and plugins edgeovn installs itself. The steps share one node and run in order:
// the last two restart and stop edgeovn.
func TestRealNode(t *testing.T) {
	e, ctx := startRealNode(t)
	a := e.runPod(ctx, t, "a")
	b := e.runPod(ctx, t, "b")
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"AddressesFromEdgeovn", func(t *testing.T) { e.checkAddresses(ctx, t, a, b) }},
		{"PodToPodTCPAndUDP", func(t *testing.T) { e.checkTraffic(ctx, t, a, b) }},
		{"ReadinessProbeFromHost", func(t *testing.T) { e.checkProbe(ctx, t) }},
		{"ContainerRestartKeepsNetwork", func(t *testing.T) { a = e.checkContainerRestart(ctx, t, a, b) }},
		// On b: a's container was just restarted, and the kubelet would back off 10 s.
		{"SandboxRestartKeepsAddress", func(t *testing.T) { b = e.checkSandboxRestart(ctx, t, b, a) }},
		{"RecreatedWithSameName", func(t *testing.T) { b = e.checkRecreate(ctx, t, a, b) }},
		{"RestartKeepsNodeReady", func(t *testing.T) { e.checkRestartKeepsReady(ctx, t) }},
		{"NotReadyWhileStatusFails", func(t *testing.T) { e.checkNotReady(ctx, t, a, b) }},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			t.Log(e.daemonLog())
			t.FailNow()
		}
	}
}

// runPod creates a testserver pod on the node and waits until the kubelet reports it Ready.
func (e *realEnv) runPod(ctx context.Context, t *testing.T, name string) *corev1.Pod {
	t.Helper()
	if _, err := realpods.Create(ctx, e.rig.Kube(), realpods.TestServerPod("default", name, node)); err != nil {
		t.Fatal(err)
	}
	p, err := realpods.Wait(ctx, e.rig.Kube(), "default", name, func(p *corev1.Pod) bool { return realpods.Running(p) && realpods.Ready(p) })
	if err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	return p
}

func podIP(t *testing.T, p *corev1.Pod) netip.Addr {
	t.Helper()
	ip, err := realpods.IP(p)
	if err != nil {
		t.Fatal(err)
	}
	return ip
}

// checkAddresses: the kubelet reports as status.podIP (from containerd's CNI result) the
// address edgeovn's controller allocated and annotated, on ovn-default, with a port in NB.
func (e *realEnv) checkAddresses(ctx context.Context, t *testing.T, pods ...*corev1.Pod) {
	seen := map[netip.Addr]string{}
	for _, p := range pods {
		n, err := annotation.Decode(p.Annotations)
		if err != nil {
			t.Fatalf("pod %s annotations %v: %v", p.Name, p.Annotations, err)
		}
		ip := podIP(t, p)
		if len(n.IPs) != 1 || n.IPs[0] != ip || n.Switch != "ovn-default" || !netip.MustParsePrefix("10.42.0.0/16").Contains(ip) {
			t.Fatalf("pod %s: status.podIP %s, annotated %v on %q; want the one annotated address, in 10.42.0.0/16 on ovn-default", p.Name, ip, n.IPs, n.Switch)
		}
		if other, dup := seen[ip]; dup {
			t.Fatalf("pods %s and %s both have %s", other, p.Name, ip)
		}
		seen[ip] = p.Name
		if !e.lspExists(ctx, t, p.Name+"."+p.Namespace) {
			t.Fatalf("pod %s has no logical switch port", p.Name)
		}
	}
}

// checkTraffic: each pod's testserver exchanges with the other's over TCP (200 KB each way
// first: many segments, so unfilled checksums would show) and UDP, and the answering pod
// sees the client's own pod address (no NAT between pods).
func (e *realEnv) checkTraffic(ctx context.Context, t *testing.T, x, y *corev1.Pod) {
	t.Helper()
	for _, pair := range [][2]*corev1.Pod{{x, y}, {y, x}} {
		from, to := pair[0], pair[1]
		for _, proto := range []string{"tcp", "udp"} {
			req := realpods.DialRequest{From: podIP(t, from), Proto: proto, To: realpods.ServerAddr(podIP(t, to))}
			if proto == "tcp" {
				req.Bytes = 200_000
			}
			ans, err := e.client.Dial(ctx, req)
			if err != nil {
				t.Fatalf("pod %s to pod %s: %v", from.Name, to.Name, err)
			}
			if ans.Server != to.Name || ans.Client.Addr() != podIP(t, from) {
				t.Fatalf("%s from pod %s to %s: answered by %q seeing client %s; want %s seeing %s",
					proto, from.Name, req.To, ans.Server, ans.Client, to.Name, podIP(t, from))
			}
		}
	}
}

// checkProbe: the Ready pods passed the kubelet's HTTP readiness probe, sent from the host to
// their pod address; a pod whose probe targets a closed port is Running but gets "Readiness
// probe failed" events and never turns Ready, so the probe is not passing by default.
func (e *realEnv) checkProbe(ctx context.Context, t *testing.T) {
	spec := realpods.TestServerPod("default", "unready", node)
	spec.Spec.Containers[0].ReadinessProbe.HTTPGet.Port.IntVal = 9 // nothing listens there
	if _, err := realpods.Create(ctx, e.rig.Kube(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := realpods.Wait(ctx, e.rig.Kube(), "default", "unready", realpods.Running); err != nil {
		t.Fatal(err)
	}
	var msg string
	eventually(ctx, t, "a readiness probe failure event for pod unready", func() bool {
		msg = probeFailure(ctx, t, e, "unready")
		return msg != ""
	})
	t.Logf("pod unready: %s", msg)
	p, err := e.rig.Kube().CoreV1().Pods("default").Get(ctx, "unready", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if realpods.Ready(p) {
		t.Fatal("pod unready is Ready although its probe fails")
	}
	grace := int64(0)
	if err := e.rig.Kube().CoreV1().Pods("default").Delete(ctx, "unready", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
}

// probeFailure returns the message of a kubelet event saying the pod's readiness probe
// failed, or "".
func probeFailure(ctx context.Context, t *testing.T, e *realEnv, pod string) string {
	msg := e.podEvent(ctx, t, pod, "Unhealthy")
	if !strings.Contains(msg, "Readiness probe failed") {
		return ""
	}
	return msg
}

// podEvent returns the message of an event with the reason about the pod, or "".
func (e *realEnv) podEvent(ctx context.Context, t *testing.T, pod, reason string) string {
	t.Helper()
	evs, err := e.rig.Kube().CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == reason {
			return ev.Message
		}
	}
	return ""
}

// networkAdds counts the CNI ADDs edgeovn logged for a pod.
func (e *realEnv) networkAdds(name string) int { return e.podLogLines("pod network added", name) }

// networkDels counts the CNI DELs edgeovn logged for a pod.
func (e *realEnv) networkDels(name string) int { return e.podLogLines("pod network deleted", name) }

// podLogLines counts the daemon's log lines with the message about the pod default/name.
func (e *realEnv) podLogLines(msg, name string) int {
	n := 0
	for _, line := range strings.Split(e.daemonLog(), "\n") {
		if strings.Contains(line, `msg="`+msg+`"`) && strings.Contains(line, " pod="+name+" ") && strings.Contains(line, " namespace=default ") {
			n++
		}
	}
	return n
}
