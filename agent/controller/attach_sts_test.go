package controller

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
)

// TestAttachmentsKeptForStatefulSet: a StatefulSet's pod with an attachment, deleted while its
// StatefulSet wants it, keeps its attachment's port and address with its primary's; the pod
// re-created under its name gets both back.
func TestAttachmentsKeptForStatefulSet(t *testing.T) {
	const pa = "a.default.ovn"
	webPod := func() *corev1.Pod {
		p := pod("default/web-0", 2, selecting("a"))
		p.OwnerReferences = []metav1.OwnerReference{webRef}
		return p
	}
	newPod := func() step {
		return step{"create pod web-0", func(r *rig) error {
			_, err := r.kube.Fake.CoreV1().Pods("default").Create(r.ctx, webPod(), metav1.CreateOptions{})
			return err
		}}
	}
	r := newRig(t, attachWorld(webPod()))
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	one := int32(1)
	if err := idx.Add(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "u1"},
		Spec: appsv1.StatefulSetSpec{Replicas: &one}}); err != nil {
		t.Fatal(err)
	}
	r.c.statefulSets = appslisters.NewStatefulSetLister(idx)
	r.run([]step{syncPodStep("default/web-0")})
	first := r.attachNetwork("default/web-0", pa)
	if first == "" {
		t.Fatalf("attachment not allocated; primary %q, events %v", r.podNetwork("default/web-0"), r.rec.Events())
	}
	r.check(after{
		lsps: []string{"lsp ovn-default web-0.default 0a:58:0a:2a:00:02 10.42.0.2",
			"lsp att-a web-0.default.a.default.ovn 0a:58:ac:11:00:02 172.17.0.2"},
		allocs: []string{"alloc ovn-default default/web-0 10.42.0.2 0a:58:0a:2a:00:02",
			"alloc att-a default/web-0@a.default.ovn 172.17.0.2 0a:58:ac:11:00:02"},
		released: []string{},
	}, r.run([]step{deletePodStep("default/web-0"), syncPodStep("default/web-0")}))
	r.run([]step{newPod(), syncPodStep("default/web-0")})
	if got := r.attachNetwork("default/web-0", pa); got != first {
		t.Errorf("re-created pod's attachment %q, want the kept %q", got, first)
	}
}
