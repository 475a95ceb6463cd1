package e2e

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestRestartReconciles is Kube-OVN's duplicate-address bug turned into a test: edgeovn is
// killed (SIGKILL), a pod is deleted while it is down, and its IPAM database is destroyed.
// Pods and the host keep their network while it is down.
// The restarted daemon moves the damaged file aside, rebuilds the IPAM from the pods'
// annotations before allocating anything, removes the dead pod's port, and a new pod gets an
// address nobody holds. The surviving pod kept its network throughout.
func TestRestartReconciles(t *testing.T) {
	env, ctx := startNode(t)
	k := env.kubelet
	a := runPod(ctx, t, env, "keep")
	b := runPod(ctx, t, env, "gone")
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "host reaches pod keep through ovn0", func() bool {
		_, err := env.rig.Run(ctx, "ping", "-c", "1", "-W", "1", a.IP().String())
		return err == nil
	})

	if err := syscall.Kill(env.daemon.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()
	if out, err := podsim.Ping(ctx, a, b.IP()); err != nil {
		t.Fatalf("datapath must keep working while edgeovn is down: %v\n%s", err, out)
	}
	if out, err := env.rig.Run(ctx, "ping", "-c", "1", "-W", "1", a.IP().String()); err != nil {
		t.Fatalf("the host must keep reaching its pods through ovn0 while edgeovn is down: %v\n%s", err, out)
	}
	if err := k.DeletePod(ctx, b.Pod); err != nil {
		t.Fatal(err)
	}
	if err := podsim.RemoveNetns(b.Netns); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(env.ipamDB + suffix)
	}
	if err := os.WriteFile(env.ipamDB, []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}

	env.startDaemon(ctx, t, "edgeovn-restarted")
	// The restarted node role finds ovn0 as it left it and changes nothing.
	eventually(ctx, t, "restarted node role wires the host", func() bool {
		return strings.Contains(env.daemonLog(), "host wired to the cluster network")
	})
	if log := env.daemonLog(); strings.Contains(log, "added address to host interface") || strings.Contains(log, "wrote masquerade rules") {
		t.Fatalf("restart rewrote the host wiring that was right:\n%s", log)
	}
	c := runPod(ctx, t, env, "new")
	if c.IP() == a.IP() || c.IP() == b.IP() {
		t.Fatalf("new pod got %s; live pod holds %s, deleted pod held %s", c.IP(), a.IP(), b.IP())
	}
	eventually(ctx, t, "port of the pod deleted while edgeovn was down removed", func() bool {
		return !env.lspExists(ctx, t, "gone.default")
	})
	list := env.ipamList(ctx, t)
	if !strings.Contains(list, "default/keep") || !strings.Contains(list, "["+a.IP().String()+"]") ||
		strings.Contains(list, "default/gone") {
		t.Fatalf("rebuilt ipam does not match the cluster:\n%s", list)
	}
	if log := env.daemonLog(); !strings.Contains(log, "moved aside") {
		t.Fatalf("damaged database not reported:\n%s", log)
	}
	if out, err := podsim.Ping(ctx, a, c.IP()); err != nil {
		t.Fatalf("surviving pod cannot reach the new one: %v\n%s", err, out)
	}
}

func runPod(ctx context.Context, t *testing.T, env *env, name string) *podsim.Sandbox {
	t.Helper()
	return runPodIn(ctx, t, env, "default", name)
}

// runPodIn creates the pod in namespace (options change it first) and runs its sandbox.
func runPodIn(ctx context.Context, t *testing.T, env *env, namespace, name string, options ...func(*corev1.Pod)) *podsim.Sandbox {
	t.Helper()
	pod, err := env.kubelet.CreatePod(ctx, namespace, name, nil, options...)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := env.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, env.daemonLog())
	}
	t.Logf("CNI ADD %s: %s -> %s (%v)", name, sb.ContainerID[:12], sb.IP(), sb.AddTime.Round(time.Microsecond))
	return sb
}
