package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// A StatefulSet's pods keep their address and MAC across deletion and re-creation with the
// same name, as in Kube-OVN: when such a pod is deleted, its port (marked with its
// StatefulSet, northbound.StatefulSetKey) and its allocation stay while the same StatefulSet
// (same uid) exists, is not being deleted, and still counts the pod's ordinal among its
// replicas. They go when the StatefulSet is deleted, re-created or scaled below the ordinal.
// The mark lives in northbound, so a restart or a new leader keeps what it must and releases
// what a StatefulSet deleted meanwhile no longer wants.

// statefulSetOf returns the StatefulSet that owns the pod and the pod's ordinal, recognized
// as Kube-OVN does: an owner of kind StatefulSet in group apps whose name, a dash and a
// number make the pod's name.
func statefulSetOf(p *corev1.Pod) (metav1.OwnerReference, int, bool) {
	for _, o := range p.OwnerReferences {
		if o.Kind != "StatefulSet" || !strings.HasPrefix(o.APIVersion, "apps/") {
			continue
		}
		if n, ok := ordinal(p.Name, o.Name); ok {
			return o, n, true
		}
	}
	return metav1.OwnerReference{}, 0, false
}

// ordinal is the number after "<set>-" in a StatefulSet pod's name.
func ordinal(pod, set string) (int, bool) {
	s, ok := strings.CutPrefix(pod, set+"-")
	if !ok || s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// statefulSetMark is the port's mark for a StatefulSet's pod, "" for any other pod.
func statefulSetMark(p *corev1.Pod) string {
	if o, _, ok := statefulSetOf(p); ok && o.UID != "" {
		return o.Name + "/" + string(o.UID)
	}
	return ""
}

// keepsAddress says whether sts (nil: it does not exist) still wants the pod called pod that
// the StatefulSet marked ("<name>/<uid>") owned: the same StatefulSet, not being deleted, with
// the pod's ordinal in [start, start+replicas).
func keepsAddress(mark, pod string, sts *appsv1.StatefulSet) bool {
	name, uid, ok := strings.Cut(mark, "/")
	if !ok || sts == nil || sts.Name != name || string(sts.UID) != uid || sts.DeletionTimestamp != nil {
		return false
	}
	n, ok := ordinal(pod, name)
	if !ok {
		return false
	}
	start, replicas := 0, 1 // the API server defaults replicas to 1
	if sts.Spec.Ordinals != nil {
		start = int(sts.Spec.Ordinals.Start)
	}
	if sts.Spec.Replicas != nil {
		replicas = int(*sts.Spec.Replicas)
	}
	return n >= start && n < start+replicas
}

// keptForStatefulSet says whether the port of the pod ns/pod (deleted or completed) and its
// address stay for the pod's StatefulSet.
func (c *Controller) keptForStatefulSet(ns, pod string, port northbound.PodPort) bool {
	if port.StatefulSet == "" || c.statefulSets == nil {
		return false
	}
	name, _, _ := strings.Cut(port.StatefulSet, "/")
	sts, err := c.statefulSets.StatefulSets(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		c.log.Warn("read statefulset from cache", "namespace", ns, "statefulset", name, "err", err)
	}
	if err != nil {
		sts = nil
	}
	kept := keepsAddress(port.StatefulSet, pod, sts)
	if !kept {
		c.kept.Delete(ns + "/" + pod)
	} else if _, logged := c.kept.LoadOrStore(ns+"/"+pod, true); !logged {
		c.log.Info("pod gone, its address and port kept for its StatefulSet", "pod", pod, "namespace", ns,
			"statefulset", name, "ip", port.IPs, "mac", port.MAC.String())
	}
	return kept
}

// registerStatefulSets adds the StatefulSet informer (slimmed by the factory's transform to
// name, namespace, uid, deletion time, replicas and start ordinal): a StatefulSet deleted,
// re-created or scaled down queues its pods' kept ports for release.
func (c *Controller) registerStatefulSets(f *kubeapi.Informers) (cache.InformerSynced, error) {
	inf := f.StatefulSets()
	c.statefulSets = inf.Lister()
	on := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.stsQueue.Add(key)
		}
	}
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: on,
		UpdateFunc: func(old, cur any) {
			if o, ok := old.(*appsv1.StatefulSet); !ok || statefulSetChanged(o, cur.(*appsv1.StatefulSet)) {
				on(cur)
			}
		},
		DeleteFunc: on,
	})
	if err != nil {
		return nil, fmt.Errorf("watch statefulsets: %w", err)
	}
	return inf.Informer().HasSynced, nil
}

// statefulSetChanged says whether an update changes which pods the StatefulSet wants (its
// status changes with every pod, and is not kept).
func statefulSetChanged(a, b *appsv1.StatefulSet) bool {
	return a.UID != b.UID || (a.DeletionTimestamp == nil) != (b.DeletionTimestamp == nil) ||
		replicasOf(a) != replicasOf(b) || startOf(a) != startOf(b)
}

func replicasOf(s *appsv1.StatefulSet) int32 {
	if s.Spec.Replicas == nil {
		return 1
	}
	return *s.Spec.Replicas
}

func startOf(s *appsv1.StatefulSet) int32 {
	if s.Spec.Ordinals == nil {
		return 0
	}
	return s.Spec.Ordinals.Start
}

// syncStatefulSet queues the pods of the StatefulSet ns/name whose ports stay while they are
// gone: each one's sync keeps or releases it.
func (c *Controller) syncStatefulSet(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ports, err := c.nb.PodPorts(ctx)
	if err != nil {
		return fmt.Errorf("list pod ports for statefulset %s: %w", key, err)
	}
	for _, p := range ports {
		set, _, _ := strings.Cut(p.StatefulSet, "/")
		pns, pod, _ := strings.Cut(p.Owner, "/")
		if set != name || pns != ns {
			continue
		}
		if live, err := c.pods.Pods(ns).Get(pod); err == nil && !podnet.Completed(live) {
			continue
		}
		c.queue.Add(p.Owner)
	}
	return nil
}

// slimStatefulSet keeps what keepsAddress reads.
func slimStatefulSet(s *appsv1.StatefulSet) *appsv1.StatefulSet {
	out := &appsv1.StatefulSet{TypeMeta: s.TypeMeta, ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace,
		UID: s.UID, ResourceVersion: s.ResourceVersion, DeletionTimestamp: s.DeletionTimestamp}}
	out.Spec.Replicas, out.Spec.Ordinals = s.Spec.Replicas, s.Spec.Ordinals
	return out
}
