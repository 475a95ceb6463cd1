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
		if err := u.writeCondition(ctx, name, v); err != nil {
			u.r.log.Warn("report provider network status", "provider", name, "err", err)
			continue
		}
		u.reported[name] = v
		if !v.ready {
			u.r.log.Warn("provider network not ready on this node", "provider", name, "reason", v.msg)
		}
	}
	for name := range u.reported {
		if _, ok := verdicts[name]; !ok {
			delete(u.reported, name)
		}
	}
}

func (u *underlay) writeCondition(ctx context.Context, name string, v nodeVerdict) error {
	res := u.dyn.Resource(kubeovn.ProviderNetworkResource)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		pn, err := kubeovn.ProviderNetworkFrom(obj)
		if err != nil {
			return err
		}
		status := string(corev1.ConditionFalse)
		if v.ready {
			status = string(corev1.ConditionTrue)
		}
		if !pn.Status.SetNodeCondition(u.r.req.NodeName, kubeovn.ConditionReady, status, v.reason, v.msg, metav1.Now()) {
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
