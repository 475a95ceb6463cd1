package controller

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// after is the state a table case expects once its steps ran.
type after struct {
	// pods maps pod keys to their annotated allocation ("SWITCH IP MAC", "" for none).
	pods map[string]string
	// nodes maps node names to their annotated join allocation ("join IP MAC", "" for none).
	nodes map[string]string
	// lsps are northbound's switch ports ("lsp SWITCH PORT ADDRESSES"), the join switch's
	// node ports included; allocs the IPAM database's allocations ("alloc SUBNET OWNER IP MAC").
	lsps, allocs []string
	// released are the IPAM database's released addresses ("released SUBNET IP"); nil: not
	// compared.
	released []string
	// events must each be contained in one recorded Event, in order; no other Event may be.
	events []string
	// nbHas are northbound rows (as ctltest.NB.Rows writes them) that must be there.
	nbHas []string
	// errs are substrings of the steps' errors, one per step ("" for none).
	errs []string
}

// check compares the rig's state with want.
func (r *rig) check(want after, errs []string) {
	r.t.Helper()
	for i, e := range errs {
		w := ""
		if i < len(want.errs) {
			w = want.errs[i]
		}
		if (w == "") != (e == "") || !strings.Contains(e, w) {
			r.t.Errorf("step %d: error %q, want %q", i, e, w)
		}
	}
	for key, w := range want.pods {
		if got := r.podNetwork(key); got != w {
			r.t.Errorf("pod %s annotated %q, want %q", key, got, w)
		}
	}
	for name, w := range want.nodes {
		if got := r.nodeNetwork(name); got != w {
			r.t.Errorf("node %s annotated %q, want %q", name, got, w)
		}
	}
	if d := ctltest.Diff(r.nbRows("lsp "), want.lsps); d != "" {
		r.t.Errorf("northbound ports:%s", d)
	}
	if d := ctltest.Diff(r.ipamRows("alloc "), want.allocs); d != "" {
		r.t.Errorf("ipam allocations:%s", d)
	}
	r.nb.CheckHas(r.t, want.nbHas)
	if want.released != nil {
		if d := ctltest.Diff(r.ipamRows("released "), want.released); d != "" {
			r.t.Errorf("ipam released:%s", d)
		}
	}
	r.rec.Check(r.t, want.events)
}

func pinned(ip string) map[string]string { return map[string]string{annotation.IPAddress: ip} }

func completedPod(p *corev1.Pod) *corev1.Pod {
	p.Status.Phase = corev1.PodSucceeded
	return p
}

// TestSyncPod runs syncPod on a term whose topology and Subnets are applied: {pods, Subnets,
// northbound and IPAM rows before} -> {annotations, ports, IPAM rows, Events after}.
func TestSyncPod(t *testing.T) {
	private := ctltest.Subnet("secure", kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: "10.50.0.0/24",
		Gateway: "10.50.0.1", Namespaces: []string{"sec"}, Private: true})
	tests := []struct {
		name   string
		before world
		steps  []step
		want   after
	}{{
		name:   "new pod gets the first address, its MAC, a port, then its annotations",
		before: world{pods: []*corev1.Pod{pod("default/a", 1, nil)}},
		steps:  []step{syncPodStep("default/a")},
		want: after{
			pods:   map[string]string{"default/a": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps:   []string{"lsp ovn-default a.default 0a:58:0a:2a:00:02 10.42.0.2"},
			allocs: []string{"alloc ovn-default default/a 10.42.0.2 0a:58:0a:2a:00:02"},
		},
	}, {
		name:   "pinned ip_address is given whole",
		before: world{pods: []*corev1.Pod{pod("default/a", 1, pinned("10.42.7.7"))}},
		steps:  []step{syncPodStep("default/a")},
		want: after{
			pods:   map[string]string{"default/a": "ovn-default 10.42.7.7 0a:58:0a:2a:07:07"},
			lsps:   []string{"lsp ovn-default a.default 0a:58:0a:2a:07:07 10.42.7.7"},
			allocs: []string{"alloc ovn-default default/a 10.42.7.7 0a:58:0a:2a:07:07"},
		},
	}, {
		name:   "pin outside the pod's subnet is refused with an Event and takes nothing",
		before: world{pods: []*corev1.Pod{pod("default/a", 1, pinned("10.99.0.5"))}},
		steps:  []step{syncPodStep("default/a")},
		want: after{
			pods:   map[string]string{"default/a": ""},
			events: []string{"Warning AllocationFailed default/a: no address for this pod (pinned ip [10.99.0.5]): address 10.99.0.5 is outside subnet ovn-default"},
		},
	}, {
		name: "completed pod releases its address and port; its annotations stay",
		before: world{
			pods:   []*corev1.Pod{completedPod(pod("default/done", 1, allocatedOn("10.42.0.5")))},
			ports:  []seedPort{{"ovn-default", "default/done", "10.42.0.5"}},
			allocs: []seedPort{{"ovn-default", "default/done", "10.42.0.5"}},
		},
		steps: []step{syncPodStep("default/done")},
		want: after{
			pods:     map[string]string{"default/done": "ovn-default 10.42.0.5 0a:58:0a:2a:00:05"},
			released: []string{"released ovn-default 10.42.0.5"},
		},
	}, {
		name: "a pod gone from the API: its port goes and its address is released",
		before: world{
			ports:  []seedPort{{"ovn-default", "default/gone", "10.42.0.6"}},
			allocs: []seedPort{{"ovn-default", "default/gone", "10.42.0.6"}},
		},
		steps: []step{syncPodStep("default/gone")},
		want:  after{released: []string{"released ovn-default 10.42.0.6"}},
	}, {
		name:   "pod of a namespace a private Subnet lists gets its address, port and isolation there",
		before: world{subnets: []*kubeovn.Subnet{private}, pods: []*corev1.Pod{pod("sec/a", 1, nil), pod("default/b", 2, nil)}},
		steps:  []step{syncPodStep("sec/a"), syncPodStep("default/b")},
		want: after{
			pods: map[string]string{"sec/a": "secure 10.50.0.2 0a:58:0a:32:00:02", "default/b": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps: []string{"lsp secure a.sec 0a:58:0a:32:00:02 10.50.0.2", "lsp ovn-default b.default 0a:58:0a:2a:00:02 10.42.0.2"},
			allocs: []string{"alloc secure sec/a 10.50.0.2 0a:58:0a:32:00:02",
				"alloc ovn-default default/b 10.42.0.2 0a:58:0a:2a:00:02"},
			nbHas: []string{"acl secure 18600 to-lport ip4 && !(ip4.src == 10.50.0.0/24 && ip4.dst == 10.50.0.0/24) drop",
				"acl secure 18700 to-lport ip4.src == 100.64.0.0/16 allow-related", "policy 31000 ip4.dst == 10.50.0.0/24 allow"},
		},
	}, {
		name: "a pin on an address another pod holds is a conflict: Event, retried, nothing taken",
		before: world{
			pods:   []*corev1.Pod{pod("default/old", 1, allocatedOn("10.42.0.9")), pod("default/new", 2, pinned("10.42.0.9"))},
			ports:  []seedPort{{"ovn-default", "default/old", "10.42.0.9"}},
			allocs: []seedPort{{"ovn-default", "default/old", "10.42.0.9"}},
		},
		steps: []step{syncPodStep("default/old"), syncPodStep("default/new")},
		want: after{
			pods:   map[string]string{"default/old": "ovn-default 10.42.0.9 0a:58:0a:2a:00:09", "default/new": ""},
			lsps:   []string{"lsp ovn-default old.default 0a:58:0a:2a:00:09 10.42.0.9"},
			allocs: []string{"alloc ovn-default default/old 10.42.0.9 0a:58:0a:2a:00:09"},
			events: []string{"Warning AddressConflict default/new: no address for this pod (pinned ip [10.42.0.9]): allocate for default/new@eth0 in subnet ovn-default: address 10.42.0.9: held by another owner default/old@eth0"},
			errs:   []string{"", "allocate address for pod default/new"},
		},
	}, {
		name: "an annotation claiming an address another pod holds is a conflict: Event, no port",
		before: world{
			pods:   []*corev1.Pod{pod("default/old", 1, allocatedOn("10.42.0.9")), pod("default/copy", 2, allocatedOn("10.42.0.9"))},
			ports:  []seedPort{{"ovn-default", "default/old", "10.42.0.9"}},
			allocs: []seedPort{{"ovn-default", "default/old", "10.42.0.9"}},
		},
		steps: []step{syncPodStep("default/copy"), syncPodStep("default/copy")},
		want: after{
			pods:   map[string]string{"default/old": "ovn-default 10.42.0.9 0a:58:0a:2a:00:09", "default/copy": "ovn-default 10.42.0.9 0a:58:0a:2a:00:09"},
			lsps:   []string{"lsp ovn-default old.default 0a:58:0a:2a:00:09 10.42.0.9"},
			allocs: []string{"alloc ovn-default default/old 10.42.0.9 0a:58:0a:2a:00:09"},
			// Reported once: the second sync finds the pod marked lost.
			events: []string{"Warning AddressConflict default/copy: annotated address [10.42.0.9]"},
		},
	}, {
		name:   "a pod on the host network is not wired",
		before: world{pods: []*corev1.Pod{hostNetwork(pod("default/h", 1, nil))}},
		steps:  []step{syncPodStep("default/h")},
		want:   after{pods: map[string]string{"default/h": ""}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.before)
			r.check(tt.want, r.run(tt.steps))
		})
	}
}

func hostNetwork(p *corev1.Pod) *corev1.Pod {
	p.Spec.HostNetwork = true
	return p
}

// TestSyncPodConcurrentPins: two pods pinning one address, synced at once by two workers:
// exactly one gets it (annotation, port, allocation) and the other an AddressConflict Event;
// northbound never holds the address twice.
func TestSyncPodConcurrentPins(t *testing.T) {
	r := newRig(t, world{pods: []*corev1.Pod{pod("default/a", 1, pinned("10.42.0.9")), pod("default/b", 1, pinned("10.42.0.9"))}})
	errs := make(chan error, 2)
	for _, key := range []string{"default/a", "default/b"} {
		go func() { errs <- r.c.syncPod(r.ctx, key) }()
	}
	failed := 0
	for range 2 {
		if err := <-errs; err != nil {
			failed++
		}
	}
	r.refresh()
	winner, loser := "default/a", "default/b"
	if r.podNetwork(winner) == "" {
		winner, loser = loser, winner
	}
	ns, name, _ := strings.Cut(winner, "/")
	r.check(after{
		pods:   map[string]string{winner: "ovn-default 10.42.0.9 0a:58:0a:2a:00:09", loser: ""},
		lsps:   []string{"lsp ovn-default " + name + "." + ns + " 0a:58:0a:2a:00:09 10.42.0.9"},
		allocs: []string{"alloc ovn-default " + winner + " 10.42.0.9 0a:58:0a:2a:00:09"},
		events: []string{"Warning AddressConflict " + loser + ": no address for this pod (pinned ip [10.42.0.9])"},
	}, nil)
	if failed != 1 {
		t.Errorf("%d syncs failed, want the loser's only (retried)", failed)
	}
}
