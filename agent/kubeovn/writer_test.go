package kubeovn

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// TestWriterFinalizer: the finalizer is added beside another's, not written again when there,
// and removed leaving the other's; a missing object is an error naming it.
func TestWriterFinalizer(t *testing.T) {
	ctx := context.Background()
	v := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vpc",
		"metadata": map[string]any{"name": "v1", "finalizers": []any{"other.io/keep"}}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{VpcResource: "VpcList"}, v)
	w := Writer{Dynamic: dyn, Resource: VpcResource, Kind: "vpc", Finalizer: "edgeovn.io/vpc"}
	read := func() *unstructured.Unstructured {
		t.Helper()
		u, err := dyn.Resource(VpcResource).Get(ctx, "v1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if err := w.SetFinalizer(ctx, read(), true); err != nil {
		t.Fatal(err)
	}
	if got := read().GetFinalizers(); !slices.Equal(got, []string{"other.io/keep", "edgeovn.io/vpc"}) {
		t.Fatalf("finalizers after adding: %v", got)
	}
	patches := len(dyn.Actions())
	if err := w.SetFinalizer(ctx, read(), true); err != nil {
		t.Fatal(err)
	}
	if n := len(dyn.Actions()) - patches; n != 1 { // the read only
		t.Fatalf("%d requests to add a finalizer already there, want 1 (the read)", n)
	}
	if err := w.SetFinalizer(ctx, read(), false); err != nil {
		t.Fatal(err)
	}
	if got := read().GetFinalizers(); !slices.Equal(got, []string{"other.io/keep"}) {
		t.Fatalf("finalizers after removing: %v", got)
	}
	gone := v.DeepCopy()
	gone.SetName("v2")
	if err := w.SetFinalizer(ctx, gone, true); err == nil || err.Error() != `set finalizer of vpc v2: vpcs.kubeovn.io "v2" not found` {
		t.Fatalf("finalizer of a missing vpc: %v", err)
	}
}

// TestWriterStatus: the status is merged into the object's, and the patch goes to the status
// subresource.
func TestWriterStatus(t *testing.T) {
	ctx := context.Background()
	v := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vpc",
		"metadata": map[string]any{"name": "v1"}, "status": map[string]any{"router": "v1"}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{VpcResource: "VpcList"}, v)
	w := Writer{Dynamic: dyn, Resource: VpcResource, Kind: "vpc"}
	if err := w.PatchStatus(ctx, "v1", map[string]any{"enableExternal": true}); err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(VpcResource).Get(ctx, "v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Object["status"]; !equalJSON(got, map[string]any{"router": "v1", "enableExternal": true}) {
		t.Fatalf("status %v", got)
	}
	if a := dyn.Actions()[0]; a.GetSubresource() != "status" {
		t.Fatalf("patched %q, want the status subresource", a.GetSubresource())
	}
}

// TestWriterUpdateStatus: a status that did not change is not written; one that did is.
func TestWriterUpdateStatus(t *testing.T) {
	ctx := context.Background()
	v := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vpc",
		"metadata": map[string]any{"name": "v1"}}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{VpcResource: "VpcList"}, v)
	w := Writer{Dynamic: dyn, Resource: VpcResource, Kind: "vpc"}
	before := VpcStatus{Router: "v1", Subnets: []string{"s1"}}
	same := before
	same.Subnets = []string{"s1"}
	if err := w.UpdateStatus(ctx, "v1", before, same); err != nil {
		t.Fatal(err)
	}
	if n := len(dyn.Actions()); n != 0 {
		t.Fatalf("%d requests for an unchanged status, want 0", n)
	}
	changed := before
	changed.Subnets = []string{"s1", "s2"}
	if err := w.UpdateStatus(ctx, "v1", before, changed); err != nil {
		t.Fatal(err)
	}
	u, err := dyn.Resource(VpcResource).Get(ctx, "v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedStringSlice(u.Object, "status", "subnets"); !slices.Equal(got, []string{"s1", "s2"}) {
		t.Fatalf("status.subnets %v after a change, want [s1 s2]", got)
	}
}

// TestSetRefused: a refusal sets Validated False, Ready False saying what stays, Error True;
// an applied spec the three back.
func TestSetRefused(t *testing.T) {
	var st VpcStatus
	now := metav1.Now()
	set := func(ty, status, reason, msg string) { st.SetCondition(ty, status, reason, msg, now) }
	SetRefused(set, "InvalidSpec", "bad route", "not applied (the routes applied before stay)")
	want := map[string][3]string{
		ConditionValidated: {"False", "InvalidSpec", "bad route"},
		ConditionReady:     {"False", "InvalidSpec", "not applied (the routes applied before stay): bad route"},
		ConditionError:     {"True", "InvalidSpec", "bad route"},
	}
	check := func(want map[string][3]string) {
		t.Helper()
		for ty, w := range want {
			i := slices.IndexFunc(st.Conditions, func(c Condition) bool { return c.Type == ty })
			if i < 0 {
				t.Fatalf("no condition %s in %+v", ty, st.Conditions)
			}
			if c := st.Conditions[i]; [3]string{c.Status, c.Reason, c.Message} != w {
				t.Errorf("condition %s: %+v, want %v", ty, c, w)
			}
		}
	}
	check(want)
	SetApplied(set, "Valid", "Ready")
	check(map[string][3]string{
		ConditionValidated: {"True", "Valid", ""},
		ConditionReady:     {"True", "Ready", ""},
		ConditionError:     {"False", "NoError", ""},
	})
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
