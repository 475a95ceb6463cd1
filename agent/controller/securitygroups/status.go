package securitygroups

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/secgroup"
)

// writeStatus sets Kube-OVN's status fields (portGroup, allowSameGroupTraffic, ingressMd5,
// egressMd5 and the last syncs' success, as applied) and edgeovn's conditions Ready,
// Validated and Error, and patches the status only when something changed. A refusal is
// also a Warning Event, once per change of its message.
func (c *Controller) writeStatus(ctx context.Context, u *unstructured.Unstructured, sg *kubeovn.SecurityGroup, ref *refusal) error {
	st := sg.Status
	st.Conditions = slices.Clone(st.Conditions)
	now := metav1.Now()
	changed := false
	set := func(t, status, reason, msg string) { changed = st.SetCondition(t, status, reason, msg, now) || changed }
	switch {
	case ref != nil && ref.reason == ReasonInUse:
		set(kubeovn.ConditionReady, "False", ref.reason, ref.Error())
	case ref != nil:
		kubeovn.SetRefused(set, ref.reason, ref.Error(), "not applied (the rules applied before stay)")
		st.IngressLastSyncSuccess, st.EgressLastSyncSuccess = false, false
	default:
		kubeovn.SetApplied(set, ReasonReady, ReasonReady)
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
	return c.writer().UpdateStatus(ctx, u.GetName(), sg.Status, st)
}

// writer writes the groups' finalizer and status.
func (c *Controller) writer() kubeovn.Writer {
	return kubeovn.Writer{Dynamic: c.req.Dynamic, Resource: kubeovn.SecurityGroupResource, Kind: "security group", Finalizer: Finalizer}
}

func (c *Controller) event(u *unstructured.Unstructured, reason, msg string) {
	if c.req.Events != nil {
		c.req.Events.Event(u, corev1.EventTypeWarning, reason, msg)
	}
}
