package node

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestWantLabels: Kube-OVN's provider labels of a node: ready/interface/mtu where ready,
// exclude where the network does not apply, none where it is not ready, removed for a network
// that is gone; labels already right are not in the patch.
func TestWantLabels(t *testing.T) {
	pn := func(name string) runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetName(name)
		return u
	}
	objs := []runtime.Object{pn("a"), pn("b"), pn("c")}
	wanted := map[string]wantedUplink{"a": {nic: "eth1"}, "b": {nic: "eth2"}}
	verdicts := map[string]nodeVerdict{"a": {ready: true, mtu: 1500}, "b": {ready: false}}
	have := map[string]string{"zone": "x", "gone.provider-network.kubernetes.io/ready": "true",
		"a.provider-network.kubernetes.io/interface": "eth1", "b.provider-network.kubernetes.io/ready": "true"}
	got := wantLabels(objs, have, wanted, verdicts)
	want := map[string]any{
		"gone.provider-network.kubernetes.io/ready": nil,
		"a.provider-network.kubernetes.io/ready":    "true", "a.provider-network.kubernetes.io/mtu": "1500",
		"b.provider-network.kubernetes.io/ready":   nil,
		"c.provider-network.kubernetes.io/exclude": "true",
	}
	if !maps.Equal(got, want) {
		t.Errorf("patch %v, want %v", got, want)
	}
}
