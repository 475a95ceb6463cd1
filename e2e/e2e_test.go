package e2e

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

const node = "edge-1"

// TestPodNetwork is the walking skeleton: two pods get addresses from the SQLite IPAM, ports
// in OVN NB and veths on br-int, reach each other, and a deleted pod gives everything back.
func TestPodNetwork(t *testing.T) {
	env, ctx := startNode(t)
	k := env.kubelet
	sandboxes := []*podsim.Sandbox{runPod(ctx, t, env, "pod-a"), runPod(ctx, t, env, "pod-b")}
	a, b := sandboxes[0], sandboxes[1]
	cidr := netip.MustParsePrefix("10.42.0.0/16")
	for _, sb := range sandboxes {
		checkAnnotations(ctx, t, env, sb, cidr)
	}
	if a.IP() == b.IP() {
		t.Fatalf("both pods got %s", a.IP())
	}

	out, err := podsim.Ping(ctx, a, b.IP())
	if err != nil {
		t.Fatalf("%v\n%s", err, env.daemonLog())
	}
	t.Logf("ping %s (pod-a) -> %s (pod-b):\n%s", a.IP(), b.IP(), out)
	if err := podsim.TCP(ctx, a, b); err != nil {
		t.Fatalf("tcp between pods: %v", err)
	}
	// The runtime attached lo with the loopback plugin edgeovn installed, and ran the config
	// edgeovn wrote: edgeovn alone (its daemon serves hostPort).
	if out, err := podsim.Ping(ctx, a, netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Fatalf("lo in pod-a: %v\n%s", err, out)
	}
	list, err := k.ConfList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.Plugins); n != 1 || list.Plugins[0].Network.Type != "edgeovn" {
		t.Fatalf("cni config chains %d plugins, want edgeovn alone: %s", n, list.Bytes)
	}

	// Deleting pod-b: the runtime's CNI DEL (twice, as containerd repeats it), then the API object.
	if err := k.StopSandbox(ctx, b, true); err != nil {
		t.Fatal(err)
	}
	if err := k.StopSandbox(ctx, b, false); err != nil {
		t.Fatalf("second CNI DEL after the netns is gone: %v", err)
	}
	if err := k.DeletePod(ctx, b.Pod); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "port pod-b.default removed from OVN NB", func() bool {
		return env.lspExists(ctx, t, "pod-b.default") == false
	})
	eventually(ctx, t, "address of pod-b released in the IPAM", func() bool {
		return !strings.Contains(env.ipamList(ctx, t), "["+b.IP().String()+"]")
	})
	if !env.lspExists(ctx, t, "pod-a.default") || !strings.Contains(env.ipamList(ctx, t), "default/pod-a") {
		t.Fatalf("pod-a lost its port or allocation when pod-b was deleted:\n%s", env.ipamList(ctx, t))
	}
	if out, err := podsim.Ping(ctx, a, b.IP()); err == nil {
		t.Fatalf("pod-b's address still answers after deletion:\n%s", out)
	}
}

func checkAnnotations(ctx context.Context, t *testing.T, env *env, sb *podsim.Sandbox, cidr netip.Prefix) {
	t.Helper()
	pod, err := env.kubelet.Kube.CoreV1().Pods(sb.Pod.Namespace).Get(ctx, sb.Pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := annotation.Decode(pod.Annotations)
	if err != nil {
		t.Fatalf("pod %s annotations %v: %v", pod.Name, pod.Annotations, err)
	}
	if len(n.IPs) != 1 || n.IPs[0] != sb.IP() || !cidr.Contains(sb.IP()) {
		t.Fatalf("pod %s: annotated %v, CNI result %s, want one equal address inside %s", pod.Name, n.IPs, sb.IP(), cidr)
	}
	if sb.IP() == netip.MustParseAddr("10.42.0.1") || n.Switch != "ovn-default" {
		t.Fatalf("pod %s: address %s on switch %q (the gateway is reserved; want ovn-default)", pod.Name, sb.IP(), n.Switch)
	}
	if got := sb.Result.Interfaces; len(got) == 0 || got[len(got)-1].Mac != n.MAC.String() {
		t.Fatalf("pod %s: CNI result interfaces %+v, annotated MAC %s", pod.Name, got, n.MAC)
	}
	if !env.lspExists(ctx, t, sb.Pod.Name+"."+sb.Pod.Namespace) {
		t.Fatalf("pod %s: no logical switch port", pod.Name)
	}
}

// eventually waits for a condition the daemon reaches asynchronously (no timing is asserted:
// only the test's deadline bounds it).
func eventually(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not reached before the test's deadline", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (e *env) lspExists(ctx context.Context, t *testing.T, name string) bool {
	t.Helper()
	out, err := e.rig.Run(ctx, "ovn-nbctl", "--db="+e.rig.NBEndpoint, "--bare", "--columns=name",
		"find", "Logical_Switch_Port", "name="+name)
	if err != nil {
		t.Fatalf("ovn-nbctl find %s: %v\n%s", name, err, out)
	}
	return strings.TrimSpace(string(out)) == name
}

func (e *env) ipamList(ctx context.Context, t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, e.bin, "ipam", "--db", e.ipamDB).CombinedOutput()
	if err != nil {
		t.Fatalf("edgeovn ipam: %v\n%s", err, out)
	}
	return string(out)
}

func (e *env) daemonLog() string {
	b, _ := os.ReadFile(e.daemon.Log)
	return "--- " + e.daemon.Log + " ---\n" + string(b)
}
