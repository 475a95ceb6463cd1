package kubeovn

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// crdServer is a fake API server for CRDs: a CRD reads back Established from its second read
// after its creation, as the API server's establishing controller marks it a moment later.
func crdServer(t *testing.T, existing ...runtime.Object) *dynamicfake.FakeDynamicClient {
	t.Helper()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{CRDResource: "CustomResourceDefinitionList"}, existing...)
	var mu sync.Mutex
	reads := map[string]int{}
	dyn.PrependReactor("get", "customresourcedefinitions", func(a k8stesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		name := a.(k8stesting.GetAction).GetName()
		obj, err := dyn.Tracker().Get(CRDResource, "", name)
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured).DeepCopy()
		if reads[name]++; reads[name] > 1 {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Established", "status": "True"}}, "status", "conditions")
		}
		return true, u, nil
	})
	return dyn
}

// TestEnsureCRDCreatesAllThenWaits: every CRD is created before any is waited for (waiting for
// each in turn cost a new cluster's first pod a second), each is waited for until Established,
// and a CRD already there (Kube-OVN's) is kept as it is.
func TestEnsureCRDCreatesAllThenWaits(t *testing.T) {
	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": VpcCRDName, "labels": map[string]any{"owner": "kube-ovn"}},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Established", "status": "True"}}},
	}}
	dyn := crdServer(t, theirs)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := EnsureCRD(ctx, dyn, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	want, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var created []string
	lastCreate, firstWait := -1, -1
	seen := map[string]bool{}
	for i, a := range dyn.Actions() {
		switch a := a.(type) {
		case k8stesting.CreateAction:
			created = append(created, a.GetObject().(*unstructured.Unstructured).GetName())
			lastCreate = i
		case k8stesting.GetAction:
			if seen[a.GetName()] && firstWait < 0 {
				firstWait = i // a second read: waiting for Established
			}
			seen[a.GetName()] = true
		}
	}
	if len(created) != len(want)-1 {
		t.Errorf("created %d CRDs (%v), want %d: all but the existing %s", len(created), created, len(want)-1, VpcCRDName)
	}
	if firstWait < 0 || firstWait < lastCreate {
		t.Errorf("a CRD was waited for (action %d) before the last was created (action %d)", firstWait, lastCreate)
	}
	for _, crd := range want {
		obj, err := dyn.Tracker().Get(CRDResource, "", crd.GetName())
		if err != nil {
			t.Errorf("%s not installed: %v", crd.GetName(), err)
			continue
		}
		if crd.GetName() == VpcCRDName && obj.(*unstructured.Unstructured).GetLabels()["owner"] != "kube-ovn" {
			t.Errorf("the existing %s was replaced", VpcCRDName)
		}
	}
}

// TestEnsureCRDNeverEstablished: CRDs the API server never establishes end the wait at the
// context's end with an error naming one.
func TestEnsureCRDNeverEstablished(t *testing.T) {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{CRDResource: "CustomResourceDefinitionList"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := EnsureCRD(ctx, dyn, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), ".kubeovn.io to be established: context deadline exceeded") {
		t.Fatalf("got %v, want the wait for a kubeovn.io CRD to fail", err)
	}
}
