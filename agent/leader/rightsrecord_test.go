package leader

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// reviewer is a fake API server that answers every access review with allow, counting them.
func reviewer(allow bool) (*fake.Clientset, *atomic.Int32) {
	kube := fake.NewClientset()
	var n atomic.Int32
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n.Add(1)
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = allow
		return true, r, nil
	})
	return kube, &n
}

// A restart trusts the grant the process before recorded, for the same credentials and rights
// and within rightsRecheck; other credentials, an old, future or broken record, or a denial
// are asked (or told) again.
func TestRightsRecordAcrossRestarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg := fastLease()
	cfg.Services, cfg.NetworkPolicy = true, true
	cfg.RightsRecord = filepath.Join(dir, "controller-rights.json")
	cfg.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(cfg.Kubeconfig, []byte("token: a"), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(allow bool) (*eligibility, *atomic.Int32) {
		kube, n := reviewer(allow)
		return newEligibility(cfg, kube.AuthorizationV1().SelfSubjectAccessReviews(), nil), n
	}
	first, n := start(true)
	if err := first.rightsGranted(ctx); err != nil || n.Load() == 0 {
		t.Fatalf("first start: %v after %d reviews, want granted after asking", err, n.Load())
	}
	if _, err := os.Stat(cfg.RightsRecord); err != nil {
		t.Fatalf("no record at %s: %v", cfg.RightsRecord, err)
	}
	second, n := start(true)
	if err := second.rightsGranted(ctx); err != nil || n.Load() != 0 {
		t.Errorf("restart within %v: %v after %d reviews, want the recorded grant trusted", rightsRecheck, err, n.Load())
	}
	record := cfg.RightsRecord
	for name, change := range map[string]func(){
		"other credentials": func() { _ = os.WriteFile(cfg.Kubeconfig, []byte("token: b"), 0o600) },
		"old grant": func() {
			_ = saveGrant(record, rightsIdentity(cfg.Kubeconfig, controllerRights(cfg)), time.Now().Add(-2*rightsRecheck))
		},
		"grant in the future": func() {
			_ = saveGrant(record, rightsIdentity(cfg.Kubeconfig, controllerRights(cfg)), time.Now().Add(time.Hour))
		},
		"broken record": func() { _ = os.WriteFile(record, []byte("{not json"), 0o600) },
	} {
		change()
		e, n := start(true)
		if err := e.rightsGranted(ctx); err != nil || n.Load() == 0 {
			t.Errorf("%s: %v after %d reviews, want the reviews asked again", name, err, n.Load())
		}
	}
	// Recorded now (by the last start above); with the rights taken away the record still
	// answers within the minute, as the process before would have; once it is old, the
	// denial is seen.
	_ = saveGrant(record, rightsIdentity(cfg.Kubeconfig, controllerRights(cfg)), time.Now().Add(-2*rightsRecheck))
	denied, _ := start(false)
	if err := denied.rightsGranted(ctx); err == nil {
		t.Error("rights denied and the record old: granted, want the missing rights named")
	}
}
