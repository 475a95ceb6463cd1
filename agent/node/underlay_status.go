package node

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// report writes this node's Ready condition into each provider network's status (Kube-OVN's
// shape: conditions per node, readyNodes, notReadyNodes, ready), when it changed since the
// last write. Each node writes only its own condition and recomputes the lists from all
// conditions, with the object's resourceVersion (a conflict is retried), so nodes writing at
// once lose nothing.
func (u *underlay) report(ctx context.Context, verdicts map[string]nodeVerdict) {
	if u.reported == nil {
		u.reported = map[string]nodeVerdict{}
	}
	for name, v := range verdicts {
		if u.reported[name] == v {
			continue
		}
		obj, err := u.writeCondition(ctx, name, v)
		if err != nil {
			u.r.log.Warn("report provider network status", "provider", name, "err", err)
			continue
		}
		u.reported[name] = v
		if !v.ready {
			u.r.log.Warn("provider network not ready on this node", "provider", name, "reason", v.msg)
			u.event(ctx, obj, v)
		}
	}
	for name := range u.reported {
		if _, ok := verdicts[name]; !ok {
			delete(u.reported, name)
		}
	}
}

// dropConditions removes this node's conditions from the provider networks that no longer
// apply to it (excludeNodes, or spec.nodeSelector not matching its labels), as Kube-OVN's
// readyNodes and notReadyNodes list only the nodes a network applies to.
func (u *underlay) dropConditions(ctx context.Context, objs []runtime.Object, wanted map[string]wantedUplink) {
	node := u.r.req.NodeName
	for _, obj := range objs {
		o, ok := obj.(*unstructured.Unstructured)
		if _, applies := wanted[o.GetName()]; !ok || applies || o.GetDeletionTimestamp() != nil {
			continue
		}
		if pn, err := kubeovn.ProviderNetworkFrom(o); err != nil || pn.Status.NodeCondition(node, kubeovn.ConditionReady) == nil {
			continue
		}
		if _, err := u.updateStatus(ctx, o.GetName(), func(st *kubeovn.ProviderNetworkStatus) bool { return st.RemoveNode(node) }); err != nil {
			u.r.log.Warn("remove this node from the provider network's status", "provider", o.GetName(), "err", err)
		}
	}
}

// updateStatus applies change to the provider network's status and writes it when change
// reports a change (a conflict is retried with the object read again). It returns the object
// it read last (nil when gone), for an Event.
func (u *underlay) updateStatus(ctx context.Context, name string, change func(*kubeovn.ProviderNetworkStatus) bool) (*unstructured.Unstructured, error) {
	res := u.dyn.Resource(kubeovn.ProviderNetworkResource)
	var read *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		read = obj
		if err != nil {
			return err
		}
		pn, err := kubeovn.ProviderNetworkFrom(obj)
		if err != nil {
			return err
		}
		if !change(&pn.Status) {
			return nil
		}
		summarize(&pn.Status)
		st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&pn.Status)
		if err != nil {
			return fmt.Errorf("render status: %w", err)
		}
		if err := unstructured.SetNestedField(obj.Object, st, "status"); err != nil {
			return err
		}
		_, err = res.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
		return err
	})
	return read, err
}

// writeCondition sets this node's Ready condition from v; it returns the object it read (nil
// when gone), for the Event.
func (u *underlay) writeCondition(ctx context.Context, name string, v nodeVerdict) (*unstructured.Unstructured, error) {
	status := string(corev1.ConditionFalse)
	if v.ready {
		status = string(corev1.ConditionTrue)
	}
	return u.updateStatus(ctx, name, func(st *kubeovn.ProviderNetworkStatus) bool {
		return st.SetNodeCondition(u.r.req.NodeName, kubeovn.ConditionReady, status, v.reason, v.msg, metav1.Now())
	})
}

func (u *underlay) event(ctx context.Context, obj *unstructured.Unstructured, v nodeVerdict) {
	if obj == nil || u.kube == nil {
		return
	}
	if u.events == nil {
		u.events, u.stopEvents = newNodeRecorder(ctx, u.kube, u.r.req.NodeName)
	}
	u.events.Event(obj, corev1.EventTypeWarning, v.reason, "node "+u.r.req.NodeName+": "+v.msg)
}

// summarize derives readyNodes, notReadyNodes and ready from the nodes' Ready conditions.
func summarize(st *kubeovn.ProviderNetworkStatus) {
	st.ReadyNodes, st.NotReadyNodes = nil, nil
	for _, c := range st.Conditions {
		if c.Type != kubeovn.ConditionReady {
			continue
		}
		if c.Status == string(corev1.ConditionTrue) {
			st.ReadyNodes = append(st.ReadyNodes, c.Node)
		} else {
			st.NotReadyNodes = append(st.NotReadyNodes, c.Node)
		}
	}
	slices.Sort(st.ReadyNodes)
	slices.Sort(st.NotReadyNodes)
	st.Ready = len(st.NotReadyNodes) == 0 && len(st.ReadyNodes) > 0
}
