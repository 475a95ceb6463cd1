package controller

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
)

// TestReconcileAfterRestart runs a term's reconcile on what an earlier term (or a crash, or a
// database that lost writes) left, then the pods' syncs: no address is handed out twice, what
// no pod holds is given back, and an address in flight stays its pod's.
func TestReconcileAfterRestart(t *testing.T) {
	tests := []struct {
		name   string
		before world
		steps  []step
		want   after
	}{{
		name: "annotated pods are adopted before any allocation: a database that lost them hands neither out",
		before: world{
			pods: []*corev1.Pod{pod("default/a", 1, allocatedOn("10.42.0.2")), pod("default/b", 2, allocatedOn("10.42.0.3")),
				pod("default/c", 3, nil)},
			ports: []seedPort{{"ovn-default", "default/a", "10.42.0.2"}, {"ovn-default", "default/b", "10.42.0.3"}},
		},
		steps: []step{reconcileStep(), syncPodStep("default/c")},
		want: after{
			pods: map[string]string{"default/a": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02",
				"default/b": "ovn-default 10.42.0.3 0a:58:0a:2a:00:03", "default/c": "ovn-default 10.42.0.4 0a:58:0a:2a:00:04"},
			lsps: []string{"lsp ovn-default a.default 0a:58:0a:2a:00:02 10.42.0.2", "lsp ovn-default b.default 0a:58:0a:2a:00:03 10.42.0.3",
				"lsp ovn-default c.default 0a:58:0a:2a:00:04 10.42.0.4"},
			allocs: []string{"alloc ovn-default default/a 10.42.0.2 0a:58:0a:2a:00:02", "alloc ovn-default default/b 10.42.0.3 0a:58:0a:2a:00:03",
				"alloc ovn-default default/c 10.42.0.4 0a:58:0a:2a:00:04"},
		},
	}, {
		name: "a northbound that lost the pods' ports (restored from a backup, or created anew) gets them back from reconcile alone",
		before: world{
			pods:  []*corev1.Pod{pod("default/a", 1, allocatedOn("10.42.0.2")), pod("default/b", 2, allocatedOn("10.42.0.3"))},
			ports: []seedPort{{"ovn-default", "default/b", "10.42.0.3"}},
		},
		steps: []step{reconcileStep()},
		want: after{
			pods:   map[string]string{"default/a": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02", "default/b": "ovn-default 10.42.0.3 0a:58:0a:2a:00:03"},
			lsps:   []string{"lsp ovn-default a.default 0a:58:0a:2a:00:02 10.42.0.2", "lsp ovn-default b.default 0a:58:0a:2a:00:03 10.42.0.3"},
			allocs: []string{"alloc ovn-default default/a 10.42.0.2 0a:58:0a:2a:00:02", "alloc ovn-default default/b 10.42.0.3 0a:58:0a:2a:00:03"},
		},
	}, {
		name: "a port whose pod is gone is removed and its address released; an allocation no pod claims is released",
		before: world{
			pods:   []*corev1.Pod{pod("default/a", 1, allocatedOn("10.42.0.2"))},
			ports:  []seedPort{{"ovn-default", "default/a", "10.42.0.2"}, {"ovn-default", "default/gone", "10.42.0.7"}},
			allocs: []seedPort{{"ovn-default", "default/a", "10.42.0.2"}, {"ovn-default", "default/gone", "10.42.0.7"}, {"ovn-default", "default/ghost", "10.42.0.8"}},
		},
		steps: []step{reconcileStep()},
		want: after{
			pods:     map[string]string{"default/a": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps:     []string{"lsp ovn-default a.default 0a:58:0a:2a:00:02 10.42.0.2"},
			allocs:   []string{"alloc ovn-default default/a 10.42.0.2 0a:58:0a:2a:00:02"},
			released: []string{"released ovn-default 10.42.0.7", "released ovn-default 10.42.0.8"},
		},
	}, {
		name: "a port whose live pod has no annotation yet keeps its address for that pod",
		before: world{
			// The earlier controller died between u's port and its annotation, and its
			// database lost the allocation: the port alone says 10.42.0.2 is u's.
			pods:  []*corev1.Pod{pod("default/u", 1, nil), pod("default/c", 2, nil)},
			ports: []seedPort{{"ovn-default", "default/u", "10.42.0.2"}},
		},
		steps: []step{reconcileStep(), syncPodStep("default/c"), syncPodStep("default/u")},
		want: after{
			pods: map[string]string{"default/u": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02", "default/c": "ovn-default 10.42.0.3 0a:58:0a:2a:00:03"},
			lsps: []string{"lsp ovn-default u.default 0a:58:0a:2a:00:02 10.42.0.2", "lsp ovn-default c.default 0a:58:0a:2a:00:03 10.42.0.3"},
			allocs: []string{"alloc ovn-default default/u 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc ovn-default default/c 10.42.0.3 0a:58:0a:2a:00:03"},
		},
	}, {
		name: "a pod that completed while no controller ran: its port goes and its address is released",
		before: world{
			pods:   []*corev1.Pod{completedPod(pod("default/job", 1, allocatedOn("10.42.0.4")))},
			ports:  []seedPort{{"ovn-default", "default/job", "10.42.0.4"}},
			allocs: []seedPort{{"ovn-default", "default/job", "10.42.0.4"}},
		},
		steps: []step{reconcileStep()},
		want: after{
			pods:     map[string]string{"default/job": "ovn-default 10.42.0.4 0a:58:0a:2a:00:04"},
			released: []string{"released ovn-default 10.42.0.4"},
		},
	}, {
		name: "a node's annotated join address is adopted before another node is given one",
		before: world{
			nodes: []*corev1.Node{node("n1", "192.168.1.1", joinOn("100.64.0.2")), ctltest.Node("n2", "192.168.1.2")},
		},
		steps: []step{reconcileStep(), syncNodeStep("n2"), syncNodeStep("n1")},
		want: after{
			nodes:  map[string]string{"n1": "join 100.64.0.2 0a:58:64:40:00:02", "n2": "join 100.64.0.3 0a:58:64:40:00:03"},
			lsps:   []string{"lsp join node-n1 0a:58:64:40:00:02 100.64.0.2", "lsp join node-n2 0a:58:64:40:00:03 100.64.0.3"},
			allocs: []string{"alloc join node:n1 100.64.0.2 0a:58:64:40:00:02", "alloc join node:n2 100.64.0.3 0a:58:64:40:00:03"},
		},
	}, {
		name: "two pods annotated with one address: the older keeps it, the newer gets an Event and loses its port",
		before: world{
			pods:  []*corev1.Pod{pod("default/new", 2, allocatedOn("10.42.0.9")), pod("default/old", 1, allocatedOn("10.42.0.9"))},
			ports: []seedPort{{"ovn-default", "default/new", "10.42.0.9"}},
		},
		steps: []step{reconcileStep(), syncPodStep("default/new"), syncPodStep("default/old")},
		want: after{
			pods: map[string]string{"default/old": "ovn-default 10.42.0.9 0a:58:0a:2a:00:09", "default/new": "ovn-default 10.42.0.9 0a:58:0a:2a:00:09"},
			// new's port from the earlier term goes: northbound never holds 10.42.0.9 twice.
			lsps:   []string{"lsp ovn-default old.default 0a:58:0a:2a:00:09 10.42.0.9"},
			allocs: []string{"alloc ovn-default default/old 10.42.0.9 0a:58:0a:2a:00:09"},
			events: []string{"Warning AddressConflict default/new: address [10.42.0.9] / MAC 0a:58:0a:2a:00:09 annotated on this pod is held by the older pod default/old"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.before)
			r.check(tt.want, r.run(tt.steps))
		})
	}
}
