package ctltest

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// RunInformers registers a feature (its Register) on a new factory of kube, runs the
// informers until the test ends and waits for their caches.
func RunInformers(ctx context.Context, t testing.TB, kube *Kube, register func(*kubeapi.Informers) ([]cache.InformerSynced, error)) {
	t.Helper()
	f := kubeapi.NewInformers(kube.Client, kubeapi.InformerOptions{})
	synced, err := register(f)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	ictx, stop := context.WithCancel(ctx)
	f.Start(ictx)
	t.Cleanup(func() { stop(); f.Shutdown() })
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers never synced")
	}
}

// Objects drives one kind of a feature's objects in its rig: a change is written through
// the dynamic fake, waited for in the feature's cache, then synced, as the informer's event
// would queue it.
type Objects struct {
	T        testing.TB
	Ctx      context.Context
	Dyn      dynamic.Interface
	Resource schema.GroupVersionResource
	Cache    cache.GenericLister // the feature's, of this term
	Sync     func(ctx context.Context, name string) error
}

// UpdateSpec reads the object's spec into S, changes it, and writes it (Write).
func UpdateSpec[S any](o Objects, name string, change func(*S)) {
	o.T.Helper()
	u, err := o.Dyn.Resource(o.Resource).Get(o.Ctx, name, metav1.GetOptions{})
	if err != nil {
		o.T.Fatal(err)
	}
	var spec S
	if m, ok := u.Object["spec"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
			o.T.Fatalf("spec of %s %s: %v", o.Resource.Resource, name, err)
		}
	}
	change(&spec)
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		o.T.Fatal(err)
	}
	u.Object["spec"] = m
	o.Write(u)
}

// Remove marks the object deleted as the API server does while a finalizer holds it.
func (o Objects) Remove(name string) {
	o.T.Helper()
	u, err := o.Dyn.Resource(o.Resource).Get(o.Ctx, name, metav1.GetOptions{})
	if err != nil {
		o.T.Fatal(err)
	}
	now := metav1.Now()
	u.SetDeletionTimestamp(&now)
	o.Write(u)
}

// Write updates u, waits until the cache has its spec and its deletion as written, and syncs it.
func (o Objects) Write(u *unstructured.Unstructured) {
	o.T.Helper()
	nu, err := o.Dyn.Resource(o.Resource).Update(o.Ctx, u, metav1.UpdateOptions{})
	if err != nil {
		o.T.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(o.Ctx, time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		obj, err := o.Cache.Get(u.GetName())
		got, ok := obj.(*unstructured.Unstructured)
		return err == nil && ok && equality.Semantic.DeepEqual(got.Object["spec"], nu.Object["spec"]) &&
			(got.GetDeletionTimestamp() != nil) == (nu.GetDeletionTimestamp() != nil), nil
	})
	if err != nil {
		o.T.Fatalf("%s %s change never reached the informer: %v", o.Resource.Resource, u.GetName(), err)
	}
	if err := o.Sync(o.Ctx, u.GetName()); err != nil {
		o.T.Fatalf("sync %s %s: %v", o.Resource.Resource, u.GetName(), err)
	}
}
