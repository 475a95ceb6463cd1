package controller

import (
	"net"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

func TestAwaitsAllocation(t *testing.T) {
	allocated := annotation.Encode(annotation.Network{Switch: kubeovn.DefaultSubnet, IPs: []netip.Addr{netip.MustParseAddr("10.42.0.5")},
		MAC: net.HardwareAddr{0x0a, 0x58, 0x0a, 0x2a, 0, 5}, CIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")},
		Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1")}})
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}, Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pinned", Annotations: map[string]string{annotation.IPAddress: "10.42.0.9"}},
			Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "allocated", Annotations: allocated}, Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unscheduled"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host"}, Spec: corev1.PodSpec{NodeName: "n1", HostNetwork: true}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "done"}, Spec: corev1.PodSpec{NodeName: "n1"},
			Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
	}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range pods {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	c := &Controller{pods: corelisters.NewPodLister(idx)}
	for key, want := range map[string]bool{
		"ns/new": true, "ns/pinned": true,
		"ns/allocated": false, "ns/unscheduled": false, "ns/host": false, "ns/done": false, "ns/gone": false, "not/a/key": false,
	} {
		if got := c.awaitsAllocation(key); got != want {
			t.Errorf("awaitsAllocation(%q) = %v, want %v", key, got, want)
		}
	}
}
