package harness

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestClusterControllers: with every default controller (the conformance cluster's
// kube-controller-manager) a ReplicaSet creates its pod, and kube-scheduler binds it to the
// one Ready node.
func TestClusterControllers(t *testing.T) {
	if err := Preflight(ControllerManager, Scheduler); err != nil {
		skip.Now(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := startRig(t, ctx, Options{})
	if _, err := r.StartControllerManager(ctx, ControllerManagerRequest{Controllers: []string{"*"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.StartScheduler(ctx); err != nil {
		t.Fatal(err)
	}
	createReadyNode(t, ctx, r, "edge-1")
	one := int32(1)
	labels := map[string]string{"app": "sched"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "sched", Namespace: "default"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				AutomountServiceAccountToken: new(bool),
				Containers:                   []corev1.Container{{Name: "c", Image: "edgeovn.local/none:1"}}}}}}
	if _, err := r.Kube().AppsV1().ReplicaSets("default").Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		pods, err := r.Kube().CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=sched"})
		if err == nil && len(pods.Items) == 1 && pods.Items[0].Spec.NodeName == "edge-1" {
			t.Logf("pod %s created by the ReplicaSet controller, bound to edge-1 by the scheduler", pods.Items[0].Name)
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pod of ReplicaSet sched bound to edge-1: %v %v", pods, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// createReadyNode registers a Node that reports Ready with room for pods, as a kubelet would.
func createReadyNode(t *testing.T, ctx context.Context, r *Rig, name string) {
	t.Helper()
	nodes := r.Kube().CoreV1().Nodes()
	if _, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	room := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10"), corev1.ResourceCPU: resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("2Gi")}
	// The controller-manager's node controllers write the new Node too: a conflict means
	// reading it again, as a kubelet does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		n.Status = corev1.NodeStatus{Capacity: room, Allocatable: room,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}
		_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
