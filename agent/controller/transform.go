package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// slim is the informers' transform (cache.TransformFunc): it keeps of each object only what
// the controller role reads, before the object enters the cache, so that the role's memory
// follows the number of pods and not the size of their specs. Every object loses its
// managedFields (often half its size); pods keep their metadata, node name, host network,
// container ports (NetworkPolicy's named ports) and phase; nodes their metadata and
// addresses; StatefulSets their name, namespace, uid, deletion time, replicas and start
// ordinal. A handler that starts reading another field must keep it here: the field is
// otherwise always empty in the cache.
func slim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return slimPod(o), nil
	case *corev1.Node:
		return slimNode(o), nil
	case *appsv1.StatefulSet:
		return slimStatefulSet(o), nil
	case metav1.Object:
		o.SetManagedFields(nil)
	}
	return obj, nil
}

func slimPod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.ObjectMeta}
	out.ManagedFields = nil
	out.Spec.NodeName, out.Spec.HostNetwork = p.Spec.NodeName, p.Spec.HostNetwork
	for _, c := range p.Spec.Containers {
		out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: c.Name, Ports: c.Ports})
	}
	out.Status.Phase = p.Status.Phase
	return out
}

func slimNode(n *corev1.Node) *corev1.Node {
	out := &corev1.Node{TypeMeta: n.TypeMeta, ObjectMeta: n.ObjectMeta}
	out.ManagedFields = nil
	out.Status.Addresses = n.Status.Addresses
	// The Ready condition's status alone: a centralized Subnet's gateway follows it
	// (subnets/gateway.go); its times and message would only take room.
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return out
}
