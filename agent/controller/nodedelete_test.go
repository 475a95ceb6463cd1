package controller

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
)

// TestNodeDeletion: a deleted node's join port, join address, address set and router
// policies go (the other node's stay), whether the controller sees the deletion (syncNode) or
// it happened while no controller ran (the next term's reconcile).
func TestNodeDeletion(t *testing.T) {
	twoNodes := world{nodes: []*corev1.Node{ctltest.Node("n1", "192.168.1.1"), ctltest.Node("n2", "192.168.1.2")},
		pods: []*corev1.Pod{pod("default/a", 1, nil)}}
	setup := []step{syncPodStep("default/a"), syncNodeStep("n1"), syncNodeStep("n2")}
	n2Left := after{
		nodes: map[string]string{"n1": "", "n2": "join 100.64.0.3 0a:58:64:40:00:03"},
		pods:  map[string]string{"default/a": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
		lsps:  []string{"lsp join node-n2 0a:58:64:40:00:03 100.64.0.3", "lsp ovn-default a.default 0a:58:0a:2a:00:02 10.42.0.2"},
		allocs: []string{"alloc join node:n2 100.64.0.3 0a:58:64:40:00:03",
			"alloc ovn-default default/a 10.42.0.2 0a:58:0a:2a:00:02"},
		nbHas: []string{"policy 29000 ip4.src == $n2.pods_ip4 reroute 100.64.0.3", "policy 31000 ip4.dst == 192.168.1.2 reroute 100.64.0.3"},
	}
	tests := []struct {
		name  string
		steps []step
		want  after
	}{{
		name:  "both nodes synced: each has its join port, address, address set and policies",
		steps: setup,
		want: after{
			nodes: map[string]string{"n1": "join 100.64.0.2 0a:58:64:40:00:02", "n2": "join 100.64.0.3 0a:58:64:40:00:03"},
			lsps: []string{"lsp join node-n1 0a:58:64:40:00:02 100.64.0.2", "lsp join node-n2 0a:58:64:40:00:03 100.64.0.3",
				"lsp ovn-default a.default 0a:58:0a:2a:00:02 10.42.0.2"},
			allocs: []string{"alloc join node:n1 100.64.0.2 0a:58:64:40:00:02", "alloc join node:n2 100.64.0.3 0a:58:64:40:00:03",
				"alloc ovn-default default/a 10.42.0.2 0a:58:0a:2a:00:02"},
			nbHas: []string{"addrset n1.pods_ip4 10.42.0.2", "policy 29000 ip4.src == $n1.pods_ip4 reroute 100.64.0.2",
				"policy 31000 ip4.dst == 192.168.1.1 reroute 100.64.0.2"},
		},
	}, {
		name:  "node deleted while the controller runs",
		steps: append(slices.Clone(setup), deleteNodeStep("n1"), syncNodeStep("n1")),
		want:  n2Left,
	}, {
		name:  "node deleted while no controller ran: the next reconcile removes its rows",
		steps: append(slices.Clone(setup), deleteNodeStep("n1"), reconcileStep()),
		want:  n2Left,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, twoNodes)
			r.check(tt.want, r.run(tt.steps))
			if tt.want.nodes["n1"] != "" {
				return
			}
			for _, row := range r.nb.Rows(t) {
				if strings.Contains(row, "n1") || strings.Contains(row, "100.64.0.2 ") || strings.HasSuffix(row, "100.64.0.2") ||
					strings.Contains(row, "192.168.1.1") {
					t.Errorf("row of deleted node n1 left: %q", row)
				}
			}
			if rows := r.ipamRows("released "); !slices.Contains(rows, "released join 100.64.0.2") {
				t.Errorf("n1's join address not released: %q", rows)
			}
		})
	}
}
