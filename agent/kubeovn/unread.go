package kubeovn

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// UnreadSubnet is what a Subnet whose spec does not read (a field of the wrong type) still
// gives: its metadata and its status, so the refusal is written under its name over the status
// applied before (an empty one if that does not read either).
func UnreadSubnet(u *unstructured.Unstructured) *Subnet {
	var s Subnet
	s.ObjectMeta = unreadMeta(u)
	unreadStatus(u, &s.Status)
	return &s
}

// UnreadVpc is UnreadSubnet's Vpc.
func UnreadVpc(u *unstructured.Unstructured) *Vpc {
	var v Vpc
	v.ObjectMeta = unreadMeta(u)
	unreadStatus(u, &v.Status)
	return &v
}

func unreadMeta(u *unstructured.Unstructured) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
		ResourceVersion: u.GetResourceVersion(), Generation: u.GetGeneration(), Labels: u.GetLabels(),
		Annotations: u.GetAnnotations(), Finalizers: u.GetFinalizers(), DeletionTimestamp: u.GetDeletionTimestamp()}
}

// unreadStatus reads u's status into status, left as it is when that does not read.
func unreadStatus[S any](u *unstructured.Unstructured, status *S) {
	m, ok := u.Object["status"].(map[string]any)
	if !ok {
		return
	}
	var s S
	if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &s) == nil {
		*status = s
	}
}
