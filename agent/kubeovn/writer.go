package kubeovn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Writer writes what a controller feature writes of the kubeovn.io objects it owns (Subnets,
// Vpcs, SecurityGroups, the NAT kinds): its finalizer and the status.
type Writer struct {
	Dynamic   dynamic.Interface
	Resource  schema.GroupVersionResource
	Kind      string // what errors call the object: "vpc", "security group"
	Finalizer string
}

// SetFinalizer adds (want) or removes w.Finalizer on u, guarded by u's resourceVersion (a
// write over a newer object fails with Conflict, and its sync runs again from the cache); it
// writes nothing when u already is as wanted.
func (w Writer) SetFinalizer(ctx context.Context, u *unstructured.Unstructured, want bool) error {
	fs := u.GetFinalizers()
	if slices.Contains(fs, w.Finalizer) == want {
		return nil
	}
	if want {
		fs = append(slices.Clone(fs), w.Finalizer)
	} else {
		fs = slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == w.Finalizer })
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fs, "resourceVersion": u.GetResourceVersion()}})
	if err != nil {
		return fmt.Errorf("encode finalizers of %s %s: %w", w.Kind, u.GetName(), err)
	}
	if _, err := w.Dynamic.Resource(w.Resource).Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("set finalizer of %s %s: %w", w.Kind, u.GetName(), err)
	}
	return nil
}

// PatchStatus merges status into the status of the object called name.
func (w Writer) PatchStatus(ctx context.Context, name string, status any) error {
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return fmt.Errorf("encode status of %s %s: %w", w.Kind, name, err)
	}
	if _, err := w.Dynamic.Resource(w.Resource).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("write status of %s %s: %w", w.Kind, name, err)
	}
	return nil
}

// UpdateStatus patches the status of the object called name to after when it differs from
// before (by their JSON): a sync that changed nothing writes nothing.
func (w Writer) UpdateStatus(ctx context.Context, name string, before, after any) error {
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	if bytes.Equal(a, b) {
		return nil
	}
	return w.PatchStatus(ctx, name, after)
}

// ConditionSetter sets one condition of a status (its SetCondition, bound to the status and the
// time) and remembers whether it changed.
type ConditionSetter func(t, status, reason, msg string)

// SetApplied sets the conditions of a spec that was applied: Validated and Ready True with
// their reasons, Error False.
func SetApplied(set ConditionSetter, validated, ready string) {
	set(ConditionValidated, "True", validated, "")
	set(ConditionReady, "True", ready, "")
	set(ConditionError, "False", "NoError", "")
}

// SetRefused sets the conditions of a spec that was refused for reason (msg says why):
// Validated False, Ready False saying what stays ("not applied (the routes applied before
// stay): " + msg), Error True.
func SetRefused(set ConditionSetter, reason, msg, stays string) {
	set(ConditionValidated, "False", reason, msg)
	set(ConditionReady, "False", reason, stays+": "+msg)
	set(ConditionError, "True", reason, msg)
}
