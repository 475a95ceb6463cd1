package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestCompletedPodReleased: a pod whose containers stopped for good (a finished Job) gives its
// port and address back though its object stays, whether edgeovn sees it finish or finds it
// finished after a restart; a running pod keeps its own throughout.
func TestCompletedPodReleased(t *testing.T) {
	env, ctx := startNode(t)
	keep := runPod(ctx, t, env, "keep")
	job := runPod(ctx, t, env, "job")
	finish(ctx, t, env, job, corev1.PodSucceeded)
	waitReleased(ctx, t, env, job)

	// Finished while edgeovn was down: the restarted controller's reconciliation frees it.
	late := runPod(ctx, t, env, "late")
	if err := syscall.Kill(env.daemon.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = env.daemon.Wait()
	// The runtime's CNI DEL fails while edgeovn is down; it removes the namespace and retries
	// the DEL once the daemon answers again.
	if err := podsim.RemoveNetns(late.Netns); err != nil {
		t.Fatal(err)
	}
	if err := env.kubelet.Finish(ctx, late.Pod, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	env.startDaemon(ctx, t, "edgeovn-restarted")
	if err := env.kubelet.StopSandbox(ctx, late, false); err != nil {
		t.Fatalf("retried CNI DEL: %v", err)
	}
	waitReleased(ctx, t, env, late)

	if !env.lspExists(ctx, t, "keep.default") || !strings.Contains(env.ipamList(ctx, t), "["+keep.IP().String()+"]") {
		t.Fatalf("the running pod lost its port or address:\n%s", env.ipamList(ctx, t))
	}
	if _, err := env.kubelet.Kube.CoreV1().Pods("default").Get(ctx, "job", metav1.GetOptions{}); err != nil {
		t.Fatalf("the completed pod's object must stay: %v", err)
	}
}

// finish stops the sandbox as the runtime does (CNI DEL, namespace removed), then reports the
// pod's phase.
func finish(ctx context.Context, t *testing.T, env *env, sb *podsim.Sandbox, phase corev1.PodPhase) {
	t.Helper()
	if err := env.kubelet.StopSandbox(ctx, sb, true); err != nil {
		t.Fatal(err)
	}
	if err := env.kubelet.Finish(ctx, sb.Pod, phase); err != nil {
		t.Fatal(err)
	}
}

func waitReleased(ctx context.Context, t *testing.T, env *env, sb *podsim.Sandbox) {
	t.Helper()
	lsp := sb.Pod.Name + "." + sb.Pod.Namespace
	eventually(ctx, t, "port "+lsp+" of the completed or deleted pod removed", func() bool { return !env.lspExists(ctx, t, lsp) })
	eventually(ctx, t, "address of the completed or deleted pod "+sb.Pod.Name+" released", func() bool {
		return !strings.Contains(env.ipamList(ctx, t), sb.Pod.Namespace+"/"+sb.Pod.Name)
	})
}
