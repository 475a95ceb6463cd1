package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestStatefulSetAddress: a StatefulSet's pod keeps its address and MAC across deletion and
// re-creation with the same name, as in Kube-OVN: its port and allocation stay while the pod
// is gone, also across a restart of edgeovn (SIGKILL); scaling the StatefulSet below a gone
// pod's ordinal releases it, and so does deleting the StatefulSet while edgeovn is down. The
// rig has no controller-manager: the test creates the StatefulSet object and its pods (with
// their ownerReference) as the StatefulSet controller would.
func TestStatefulSetAddress(t *testing.T) {
	env, ctx := startNode(t)
	set := createStatefulSet(ctx, t, env, "web", 3)
	pods := map[string]*podsim.Sandbox{}
	for i := range 3 {
		name := fmt.Sprintf("web-%d", i)
		pods[name] = runStatefulSetPod(ctx, t, env, set, name)
	}

	// Deleted and re-created: same address, same MAC.
	first := pods["web-0"]
	deleteStatefulSetPod(ctx, t, env, first)
	waitKept(ctx, t, env, "web-0")
	again := runStatefulSetPod(ctx, t, env, set, "web-0")
	checkSameAddress(t, first, again)

	// Kept across a restart of edgeovn; the pod re-created after it gets the same address.
	deleteStatefulSetPod(ctx, t, env, again)
	waitKept(ctx, t, env, "web-0")
	env.stopDaemon(t)
	env.startDaemon(ctx, t, "edgeovn-restarted")
	eventually(ctx, t, "restarted controller reconciled", func() bool {
		return strings.Contains(env.daemonLog(), "controller role running")
	})
	if !env.lspExists(ctx, t, "web-0.default") || !strings.Contains(env.ipamList(ctx, t), "default/web-0") {
		t.Fatalf("the restart released web-0's kept address:\n%s", env.ipamList(ctx, t))
	}
	after := runStatefulSetPod(ctx, t, env, set, "web-0")
	checkSameAddress(t, first, after)

	// Scaled below a gone pod's ordinal: released.
	deleteStatefulSetPod(ctx, t, env, pods["web-2"])
	waitKept(ctx, t, env, "web-2")
	scaleStatefulSet(ctx, t, env, "web", 2)
	waitReleased(ctx, t, env, pods["web-2"])

	// Deleted while edgeovn is down: the restarted controller releases its gone pods.
	deleteStatefulSetPod(ctx, t, env, pods["web-1"])
	waitKept(ctx, t, env, "web-1")
	env.stopDaemon(t)
	if err := env.rig.Kube().AppsV1().StatefulSets("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	env.startDaemon(ctx, t, "edgeovn-restarted-2")
	waitReleased(ctx, t, env, pods["web-1"])
	if !env.lspExists(ctx, t, "web-0.default") {
		t.Fatal("web-0, still running, lost its port when its StatefulSet was deleted")
	}
}

func createStatefulSet(ctx context.Context, t *testing.T, env *env, name string, replicas int32) *appsv1.StatefulSet {
	t.Helper()
	labels := map[string]string{"app": name}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause:1"}}}}}}
	got, err := env.rig.Kube().AppsV1().StatefulSets("default").Create(ctx, set, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func scaleStatefulSet(ctx context.Context, t *testing.T, env *env, name string, replicas int32) {
	t.Helper()
	sets := env.rig.Kube().AppsV1().StatefulSets("default")
	cur, err := sets.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Replicas = &replicas
	if _, err := sets.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// runStatefulSetPod creates the StatefulSet's pod called name, as its controller would, and
// runs its sandbox.
func runStatefulSetPod(ctx context.Context, t *testing.T, env *env, set *appsv1.StatefulSet, name string) *podsim.Sandbox {
	t.Helper()
	yes := true
	pod, err := env.kubelet.CreatePod(ctx, "default", name, nil, func(p *corev1.Pod) {
		p.Labels = set.Spec.Template.Labels
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name,
			UID: set.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
	})
	if err != nil {
		t.Fatal(err)
	}
	sb := runSandbox(ctx, t, env, pod)
	t.Logf("%s: %s %s", name, sb.IP(), sandboxMAC(sb))
	return sb
}

func deleteStatefulSetPod(ctx context.Context, t *testing.T, env *env, sb *podsim.Sandbox) {
	t.Helper()
	if err := env.kubelet.StopSandbox(ctx, sb, true); err != nil {
		t.Fatal(err)
	}
	if err := env.kubelet.DeletePod(ctx, sb.Pod); err != nil {
		t.Fatal(err)
	}
}

// waitKept waits until the controller has seen the pod gone and kept its address.
func waitKept(ctx context.Context, t *testing.T, env *env, pod string) {
	t.Helper()
	eventually(ctx, t, pod+"'s address kept for its StatefulSet", func() bool {
		return containsLine(env.daemonLog(), "address and port kept for its StatefulSet", "pod="+pod+" ")
	})
	if !env.lspExists(ctx, t, pod+".default") || !strings.Contains(env.ipamList(ctx, t), "default/"+pod) {
		t.Fatalf("%s's port or address released:\n%s", pod, env.ipamList(ctx, t))
	}
}

func checkSameAddress(t *testing.T, before, after *podsim.Sandbox) {
	t.Helper()
	if after.IP() != before.IP() || sandboxMAC(after) != sandboxMAC(before) {
		t.Fatalf("re-created %s got %s %s, had %s %s", after.Pod.Name, after.IP(), sandboxMAC(after), before.IP(), sandboxMAC(before))
	}
}

func sandboxMAC(sb *podsim.Sandbox) string {
	return sb.Result.Interfaces[len(sb.Result.Interfaces)-1].Mac
}
