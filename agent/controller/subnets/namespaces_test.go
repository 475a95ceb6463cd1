package subnets

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// TestPodSubnetChoice is Kube-OVN's order: the pod's logical_switch annotation, else the
// Subnets whose spec.namespaces lists its namespace, else a logical_switch a person set on the
// namespace, else the default subnet (a Subnet marked default, else ovn-default). The join
// network, unknown and deleting subnets are refused with a reason.
func TestPodSubnetChoice(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: "ns1"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "plain"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "user", Annotations: map[string]string{annotation.LogicalSwitch: "other"}}},
		// edgeovn's own earlier write, now stale: not a person's choice.
		{ObjectMeta: metav1.ObjectMeta{Name: "stale", Annotations: map[string]string{annotation.LogicalSwitch: "subnet1", namespaceWritten: "subnet1"}}},
	} {
		if err := idx.Add(ns); err != nil {
			t.Fatal(err)
		}
	}
	s := &Controller{nsList: corelisters.NewNamespaceLister(idx), applied: map[string]appliedSubnet{
		kubeovn.DefaultSubnet: {spec: kubeovn.SubnetSpec{Default: true}},
		kubeovn.JoinSubnet:    {},
		"subnet1":             {spec: kubeovn.SubnetSpec{Namespaces: []string{"ns1", "ns2"}}},
		"other":               {},
		"going":               {deleting: true},
	}}
	pod := func(ns string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
	}
	tests := []struct {
		ns, asked, want string
	}{
		{"ns1", "", "subnet1"},
		{"ns1", "other", "other"},
		{"plain", "", kubeovn.DefaultSubnet},
		{"user", "", "other"},
		{"stale", "", kubeovn.DefaultSubnet},
		{"plain", kubeovn.JoinSubnet, "error: holds the nodes' addresses"},
		{"plain", "nope", `error: subnet "nope" does not exist`},
		{"plain", "going", `error: subnet "going" is being deleted`},
	}
	for _, tt := range tests {
		got, err := s.PodSubnet(pod(tt.ns), tt.asked)
		if err != nil {
			got = "error: " + err.Error()
		}
		wantErr, isErr := strings.CutPrefix(tt.want, "error: ")
		if isErr && !strings.Contains(got, wantErr) || !isErr && got != tt.want {
			t.Errorf("namespace %s, asked %q: %s, want %s", tt.ns, tt.asked, got, tt.want)
		}
	}
	// A Subnet marked default takes the namespaces bound to none (the oldest, when several).
	now := time.Now()
	s.applied["edge"] = appliedSubnet{spec: kubeovn.SubnetSpec{Default: true}, created: now}
	s.applied["edge-older"] = appliedSubnet{spec: kubeovn.SubnetSpec{Default: true}, created: now.Add(-time.Hour)}
	if got, err := s.PodSubnet(pod("plain"), ""); err != nil || got != "edge-older" {
		t.Errorf("with default subnets edge and edge-older: %s %v, want edge-older", got, err)
	}
}
