package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func stsPod(name string, owners ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, OwnerReferences: owners}}
}

var webRef = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "u1"}

// TestStatefulSetOf recognizes a StatefulSet's pod as Kube-OVN does: owned by a StatefulSet
// of group apps, named after it with a dash and its ordinal.
func TestStatefulSetOf(t *testing.T) {
	tests := []struct {
		pod     *corev1.Pod
		ordinal int
		mark    string
	}{
		{stsPod("web-0", webRef), 0, "web/u1"},
		{stsPod("web-12", webRef), 12, "web/u1"},
		{stsPod("web-x", webRef), -1, ""},
		{stsPod("web-", webRef), -1, ""},
		{stsPod("web-1-2", webRef), -1, ""},
		{stsPod("webby-1", webRef), -1, ""},
		{stsPod("web-1"), -1, ""},
		{stsPod("web-1", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "u1"}), -1, ""},
		{stsPod("web-1", metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "StatefulSet", Name: "web", UID: "u1"}), -1, ""},
		{stsPod("web-1", metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web"}), 1, ""},
	}
	for _, tt := range tests {
		_, n, ok := statefulSetOf(tt.pod)
		if !ok {
			n = -1
		}
		if n != tt.ordinal || statefulSetMark(tt.pod) != tt.mark {
			t.Errorf("%s owned by %v: ordinal %d mark %q, want %d %q", tt.pod.Name, tt.pod.OwnerReferences, n, statefulSetMark(tt.pod), tt.ordinal, tt.mark)
		}
	}
}

// TestKeepsAddress is Kube-OVN's rule for a StatefulSet's deleted pod: kept while the same
// StatefulSet (same uid) exists, is not being deleted and counts the ordinal among its
// replicas (from spec.ordinals.start); released otherwise.
func TestKeepsAddress(t *testing.T) {
	sts := func(uid string, replicas *int32, start int32, deleting bool) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: types.UID(uid)}}
		s.Spec.Replicas = replicas
		if start > 0 {
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: start}
		}
		if deleting {
			s.DeletionTimestamp = &metav1.Time{}
		}
		return s
	}
	three, zero := int32(3), int32(0)
	tests := []struct {
		name string
		pod  string
		sts  *appsv1.StatefulSet
		want bool
	}{
		{"ordinal below replicas", "web-2", sts("u1", &three, 0, false), true},
		{"first ordinal", "web-0", sts("u1", &three, 0, false), true},
		{"scaled below the ordinal", "web-3", sts("u1", &three, 0, false), false},
		{"scaled to zero", "web-0", sts("u1", &zero, 0, false), false},
		{"replicas unset means one", "web-0", sts("u1", nil, 0, false), true},
		{"replicas unset, second pod", "web-1", sts("u1", nil, 0, false), false},
		{"start ordinal", "web-5", sts("u1", &three, 5, false), true},
		{"below the start ordinal", "web-4", sts("u1", &three, 5, false), false},
		{"above start+replicas", "web-8", sts("u1", &three, 5, false), false},
		{"statefulset gone", "web-0", nil, false},
		{"statefulset being deleted", "web-0", sts("u1", &three, 0, true), false},
		{"re-created statefulset (another uid)", "web-0", sts("u2", &three, 0, false), false},
		{"pod name not of the set", "db-0", sts("u1", &three, 0, false), false},
	}
	for _, tt := range tests {
		if got := keepsAddress("web/u1", tt.pod, tt.sts); got != tt.want {
			t.Errorf("%s: keepsAddress = %v, want %v", tt.name, got, tt.want)
		}
	}
	if keepsAddress("", "web-0", sts("u1", &three, 0, false)) || keepsAddress("web", "web-0", sts("u1", &three, 0, false)) {
		t.Error("a port without a valid mark is kept")
	}
}

// TestStatefulSetChanged: only changes of what keepsAddress reads queue the StatefulSet's
// kept pods (its status changes with every pod).
func TestStatefulSetChanged(t *testing.T) {
	three, two := int32(3), int32(2)
	a := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1", ResourceVersion: "1"}}
	a.Spec.Replicas = &three
	b := a.DeepCopy()
	b.ResourceVersion = "2"
	b.Status.ReadyReplicas = 2
	if statefulSetChanged(a, b) {
		t.Error("a status update counted as a change")
	}
	b.Spec.Replicas = &two
	if !statefulSetChanged(a, b) {
		t.Error("a scale-down not counted")
	}
	c := a.DeepCopy()
	c.DeletionTimestamp = &metav1.Time{}
	if !statefulSetChanged(a, c) {
		t.Error("a deletion not counted")
	}
	slim := slimStatefulSet(b)
	if slim.Status.ReadyReplicas != 0 || *slim.Spec.Replicas != 2 || slim.UID != "u1" || slim.Name != "web" {
		t.Errorf("slimStatefulSet = %+v", slim)
	}
}
