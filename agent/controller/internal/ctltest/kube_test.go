package ctltest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// The fake API answers the role's client as the API server would: a merge patch lands, a
// missing object is NotFound, and an informer lists and then sees later changes.
func TestKubeServesTheRolesClient(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	k := NewKube(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}})
	if _, err := k.Client.Pods("default").Patch(ctx, "a", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"x":"1"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	p, err := k.Fake.CoreV1().Pods("default").Get(ctx, "a", metav1.GetOptions{})
	if err != nil || p.Annotations["x"] != "1" {
		t.Fatalf("patched pod %v, %v: want annotation x=1", p.Annotations, err)
	}
	_, err = k.Client.Pods("default").Patch(ctx, "gone", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("patch of a missing pod: %v, want NotFound", err)
	}

	f := kubeapi.NewInformers(k.Client, kubeapi.InformerOptions{})
	pods := f.Pods()
	_ = pods.Informer()
	ictx, stop := context.WithCancel(ctx)
	f.Start(ictx)
	defer func() { stop(); f.Shutdown() }()
	if err := k.Watches.Wait(ctx, "pods"); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Fake.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		_, errA := pods.Lister().Pods("default").Get("a")
		_, errB := pods.Lister().Pods("default").Get("b")
		return errA == nil && errB == nil, nil
	})
	if err != nil {
		t.Fatalf("informer never listed a and watched b: %v", err)
	}
}
