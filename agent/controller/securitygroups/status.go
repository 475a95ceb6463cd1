package securitygroups

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/secgroup"
)

// writeStatus sets Kube-OVN's status fields (portGroup, allowSameGroupTraffic, ingressMd5,
// egressMd5 and the last syncs' success, as applied) and edgeovn's conditions Ready,
// Validated and Error, and patches the status only when something changed. A refusal is
// also a Warning Event, once per change of its message.
func (c *Controller) writeStatus(ctx context.Context, u *unstructured.Unstructured, sg *kubeovn.SecurityGroup, ref *refusal) error {
	st := sg.Status
	before, _ := json.Marshal(st)
	st.Conditions = slices.Clone(st.Conditions)
	now := metav1.Now()
	changed := false
	set := func(t, status, reason, msg string) { changed = st.SetCondition(t, status, reason, msg, now) || changed }
	switch {
	case ref != nil && ref.reason == ReasonInUse:
		set(kubeovn.ConditionReady, "False", ref.reason, ref.Error())
	case ref != nil:
		set(kubeovn.ConditionValidated, "False", ref.reason, ref.Error())
		set(kubeovn.ConditionReady, "False", ref.reason, "not applied (the rules applied before stay): "+ref.Error())
		set(kubeovn.ConditionError, "True", ref.reason, ref.Error())
		st.IngressLastSyncSuccess, st.EgressLastSyncSuccess = false, false
	default:
		set(kubeovn.ConditionValidated, "True", ReasonReady, "")
		set(kubeovn.ConditionReady, "True", ReasonReady, "")
		set(kubeovn.ConditionError, "False", "NoError", "")
		st.AllowSameGroupTraffic = sg.Spec.AllowSameGroupTraffic
		st.IngressMd5, st.EgressMd5 = kubeovn.RulesMd5(sg.Spec.IngressRules), kubeovn.RulesMd5(sg.Spec.EgressRules)
		st.IngressLastSyncSuccess, st.EgressLastSyncSuccess = true, true
	}
	if ref != nil && changed {
		c.event(u, ref.reason, ref.Error())
	}
	if sg.Name != "" {
		st.PortGroup = secgroup.PortGroupName(sg.Name)
	}
	after, _ := json.Marshal(st)
	if string(before) == string(after) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return fmt.Errorf("encode status of security group %s: %w", u.GetName(), err)
	}
	if _, err := c.req.Dynamic.Resource(kubeovn.SecurityGroupResource).Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("write status of security group %s: %w", u.GetName(), err)
	}
	return nil
}

// setFinalizer adds or removes Finalizer, guarded by the object's resourceVersion.
func (c *Controller) setFinalizer(ctx context.Context, u *unstructured.Unstructured, want bool) error {
	fs := u.GetFinalizers()
	if slices.Contains(fs, Finalizer) == want {
		return nil
	}
	if want {
		fs = append(slices.Clone(fs), Finalizer)
	} else {
		fs = slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == Finalizer })
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fs, "resourceVersion": u.GetResourceVersion()}})
	if err != nil {
		return fmt.Errorf("encode finalizers of security group %s: %w", u.GetName(), err)
	}
	if _, err := c.req.Dynamic.Resource(kubeovn.SecurityGroupResource).Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("set finalizer of security group %s: %w", u.GetName(), err)
	}
	return nil
}

func (c *Controller) event(u *unstructured.Unstructured, reason, msg string) {
	if c.req.Events != nil {
		c.req.Events.Event(u, corev1.EventTypeWarning, reason, msg)
	}
}
