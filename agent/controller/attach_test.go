package controller

import (
	"maps"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// The attachment networks of the table tests: NADs a and b of type kube-ovn (b as a conflist,
// as users write them with portmap), m of macvlan (Multus's, not edgeovn's), and their Subnets.
var (
	nadA = ctltest.NAD("default", "a", `{"cniVersion":"0.3.1","type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":"a.default.ovn"}`)
	nadB = ctltest.NAD("default", "b", `{"cniVersion":"0.3.1","name":"b","plugins":[{"type":"kube-ovn","provider":"b.default.ovn"},{"type":"portmap"}]}`)
	nadM = ctltest.NAD("default", "m", `{"cniVersion":"0.3.1","type":"macvlan","master":"eth0","ipam":{"type":"host-local"}}`)
	// nadOrphan is a kube-ovn NAD no Subnet serves.
	nadOrphan = ctltest.NAD("default", "orphan", `{"cniVersion":"0.3.1","type":"kube-ovn","provider":"orphan.default.ovn"}`)

	// nadMV is macvlan with edgeovn as its IPAM (provider mv.default, Subnet mv);
	// nadMVOrphan names a provider no Subnet has.
	nadMV       = ctltest.NAD("default", "mv", `{"cniVersion":"0.3.1","type":"macvlan","master":"eth0","ipam":{"type":"kube-ovn","provider":"mv.default"}}`)
	nadMVOrphan = ctltest.NAD("default", "mvorphan", `{"cniVersion":"0.3.1","type":"macvlan","master":"eth0","ipam":{"type":"kube-ovn","provider":"mvorphan.default"}}`)
	subnetMV    = ctltest.Subnet("mv", kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: "172.19.0.0/24",
		Gateway: "172.19.0.1", Provider: "mv.default", ExcludeIps: []string{"172.19.0.2..172.19.0.9"}})

	subnetA = ctltest.Subnet("att-a", kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: "172.17.0.0/24",
		Gateway: "172.17.0.1", Provider: "a.default.ovn"})
	subnetB = ctltest.Subnet("att-b", kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: "172.18.0.0/24",
		Gateway: "172.18.0.1", Provider: "b.default.ovn"})
)

// attachWorld is the world of the attachment cases: the NADs and Subnets above, and pods.
func attachWorld(pods ...*corev1.Pod) world {
	return world{pods: pods, subnets: []*kubeovn.Subnet{subnetA, subnetB, subnetMV},
		nads: []runtime.Object{nadA.DeepCopy(), nadB.DeepCopy(), nadM.DeepCopy(), nadOrphan.DeepCopy(), nadMV.DeepCopy(), nadMVOrphan.DeepCopy()}}
}

// selecting is the annotations of a pod selecting networks, plus more.
func selecting(networks string, more ...string) map[string]string {
	a := map[string]string{multus.NetworksAnnotation: networks}
	for i := 0; i+1 < len(more); i += 2 {
		a[more[i]] = more[i+1]
	}
	return a
}

// attachedOn is the annotations edgeovn writes for an attachment of provider at ip in a
// /24 subnet whose gateway is .1.
func attachedOn(provider, subnet, ip string) map[string]string {
	a := netip.MustParseAddr(ip)
	cidr := netip.PrefixFrom(a, 24).Masked()
	return annotation.KeysFor(provider).Encode(annotation.Network{Switch: subnet, IPs: []netip.Addr{a}, MAC: macOf(a),
		CIDRs: []netip.Prefix{cidr}, Gateways: []netip.Addr{cidr.Addr().Next()}})
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// attachNetwork is the pod's annotated allocation for provider: "SWITCH IP MAC", "" for none.
func (r *rig) attachNetwork(key, provider string) string {
	r.t.Helper()
	ns, name, _ := strings.Cut(key, "/")
	p, err := r.kube.Fake.CoreV1().Pods(ns).Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("get pod %s: %v", key, err)
	}
	n, err := annotation.KeysFor(provider).Decode(p.Annotations)
	if err != nil {
		return ""
	}
	return n.Switch + " " + n.IPs[0].String() + " " + n.MAC.String()
}

func deletePodStep(key string) step {
	return step{"delete pod " + key, func(r *rig) error {
		ns, name, _ := strings.Cut(key, "/")
		return r.kube.Fake.CoreV1().Pods(ns).Delete(r.ctx, name, metav1.DeleteOptions{})
	}}
}

// TestSyncPodAttachments: {pods selecting NADs, NADs, Subnets with providers} -> {primary and
// per-provider annotations, ports "<pod>.<ns>.<provider>", IPAM owners pod@provider, Events}.
func TestSyncPodAttachments(t *testing.T) {
	const pa, pb = "a.default.ovn", "b.default.ovn"
	type attach struct{ key, provider, want string }
	tests := []struct {
		name     string
		before   world
		steps    []step
		want     after
		attached []attach
	}{{
		name:   "two kube-ovn attachments and a macvlan one: primary, two more addresses, ports and annotations; macvlan left to Multus",
		before: attachWorld(pod("default/p", 1, selecting("m,a,b"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods: map[string]string{"default/p": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:02 10.42.0.2",
				"lsp att-a p.default.a.default.ovn 0a:58:ac:11:00:02 172.17.0.2",
				"lsp att-b p.default.b.default.ovn 0a:58:ac:12:00:02 172.18.0.2"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc att-a default/p@a.default.ovn 172.17.0.2 0a:58:ac:11:00:02",
				"alloc att-b default/p@b.default.ovn 172.18.0.2 0a:58:ac:12:00:02"},
		},
		attached: []attach{{"default/p", pa, "att-a 172.17.0.2 0a:58:ac:11:00:02"}, {"default/p", pb, "att-b 172.18.0.2 0a:58:ac:12:00:02"}},
	}, {
		name: "pins: the attachment's ip_address and mac_address annotations, and the selection's ips and mac",
		before: attachWorld(pod("default/p", 1, selecting(`[{"name":"a"},{"name":"b","ips":["172.18.0.77/24"],"mac":"02:00:00:00:00:77"}]`,
			pa+".kubernetes.io/ip_address", "172.17.0.50", pa+".kubernetes.io/mac_address", "02:00:00:00:00:50"))),
		steps: []step{syncPodStep("default/p")},
		want: after{
			pods: map[string]string{"default/p": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:02 10.42.0.2",
				"lsp att-a p.default.a.default.ovn 02:00:00:00:00:50 172.17.0.50",
				"lsp att-b p.default.b.default.ovn 02:00:00:00:00:77 172.18.0.77"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc att-a default/p@a.default.ovn 172.17.0.50 02:00:00:00:00:50",
				"alloc att-b default/p@b.default.ovn 172.18.0.77 02:00:00:00:00:77"},
		},
		attached: []attach{{"default/p", pa, "att-a 172.17.0.50 02:00:00:00:00:50"}, {"default/p", pb, "att-b 172.18.0.77 02:00:00:00:00:77"}},
	}, {
		name: "pins: the attachment's logical_switch (another Subnet than its provider's) and ip_pool annotations",
		before: attachWorld(pod("default/p", 1, selecting("a,b",
			pa+".kubernetes.io/logical_switch", "att-b", pb+".kubernetes.io/ip_pool", "172.18.0.20,172.18.0.21"))),
		steps: []step{syncPodStep("default/p")},
		want: after{
			pods: map[string]string{"default/p": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:02 10.42.0.2",
				"lsp att-b p.default.a.default.ovn 0a:58:ac:12:00:02 172.18.0.2",
				"lsp att-b p.default.b.default.ovn 0a:58:ac:12:00:14 172.18.0.20"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc att-b default/p@a.default.ovn 172.18.0.2 0a:58:ac:12:00:02",
				"alloc att-b default/p@b.default.ovn 172.18.0.20 0a:58:ac:12:00:14"},
		},
		attached: []attach{{"default/p", pa, "att-b 172.18.0.2 0a:58:ac:12:00:02"}, {"default/p", pb, "att-b 172.18.0.20 0a:58:ac:12:00:14"}},
	}, {
		name:   "one NAD selected twice on two interfaces: providers <nad>.<ns>.ovn.<iface>, both in its Subnet",
		before: attachWorld(pod("default/p", 1, selecting("a@x,a@y"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods: map[string]string{"default/p": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:02 10.42.0.2",
				"lsp att-a p.default.a.default.ovn.x 0a:58:ac:11:00:02 172.17.0.2",
				"lsp att-a p.default.a.default.ovn.y 0a:58:ac:11:00:03 172.17.0.3"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc att-a default/p@a.default.ovn.x 172.17.0.2 0a:58:ac:11:00:02",
				"alloc att-a default/p@a.default.ovn.y 172.17.0.3 0a:58:ac:11:00:03"},
		},
		attached: []attach{{"default/p", pa + ".x", "att-a 172.17.0.2 0a:58:ac:11:00:02"}, {"default/p", pa + ".y", "att-a 172.17.0.3 0a:58:ac:11:00:03"}},
	}, {
		name:   "default-network naming a kube-ovn NAD: the primary interface's allocation is on that NAD's Subnet",
		before: attachWorld(pod("default/p", 1, selecting("", multus.DefaultNetworkAnnotation, "default/a"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": "att-a 172.17.0.2 0a:58:ac:11:00:02"},
			lsps:   []string{"lsp att-a p.default 0a:58:ac:11:00:02 172.17.0.2"},
			allocs: []string{"alloc att-a default/p 172.17.0.2 0a:58:ac:11:00:02"},
		},
	}, {
		name:   "default-network naming another plugin's NAD is not served: an Event says so, the primary stays on the namespace's Subnet",
		before: attachWorld(pod("default/p", 1, selecting("", multus.DefaultNetworkAnnotation, "default/m"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps:   []string{"lsp ovn-default p.default 0a:58:0a:2a:00:02 10.42.0.2"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.2 0a:58:0a:2a:00:02"},
			events: []string{`Warning DefaultNetworkUnsupported default/p: v1.multus-cni.io/default-network "default/m" is not a kube-ovn network`},
		},
	}, {
		name:   "macvlan with kube-ovn IPAM: an address on the Subnet of provider <nad>.<ns> outside its excludeIps, annotations under it, no port",
		before: attachWorld(pod("default/p", 1, selecting("mv,a"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods: map[string]string{"default/p": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:02 10.42.0.2",
				"lsp att-a p.default.a.default.ovn 0a:58:ac:11:00:02 172.17.0.2"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc mv default/p@mv.default 172.19.0.10 0a:58:ac:13:00:0a",
				"alloc att-a default/p@a.default.ovn 172.17.0.2 0a:58:ac:11:00:02"},
		},
		attached: []attach{{"default/p", "mv.default", "mv 172.19.0.10 0a:58:ac:13:00:0a"}},
	}, {
		name:   "macvlan with kube-ovn IPAM, pod deleted: its address is released with the others",
		before: attachWorld(pod("default/p", 1, selecting("mv"))),
		steps:  []step{syncPodStep("default/p"), deletePodStep("default/p"), syncPodStep("default/p")},
		want: after{
			released: []string{"released mv 172.19.0.10", "released ovn-default 10.42.0.2"},
		},
	}, {
		name:   "kube-ovn IPAM of a provider no Subnet has: Event naming it, nothing allocated, retried",
		before: attachWorld(pod("default/p", 1, selecting("mvorphan"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": ""},
			events: []string{"Warning AttachmentFailed default/p: attachment networks: attachment default/mvorphan: no Subnet has provider mvorphan.default"},
			errs:   []string{"attachments of pod default/p"},
		},
	}, {
		name:   "a missing NAD: Event naming it, nothing allocated, retried",
		before: attachWorld(pod("default/p", 1, selecting("a,gone"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": ""},
			events: []string{"Warning AttachmentFailed default/p: attachment networks: attachment default/gone: NetworkAttachmentDefinition default/gone not found"},
			errs:   []string{"attachments of pod default/p"},
		},
	}, {
		name:   "a NAD no Subnet serves: Event naming the attachment and provider, nothing allocated, retried",
		before: attachWorld(pod("default/p", 1, selecting("a,orphan"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": ""},
			events: []string{"Warning AttachmentFailed default/p: attachment networks: attachment default/orphan: no Subnet has provider orphan.default.ovn"},
			errs:   []string{"attachments of pod default/p"},
		},
	}, {
		name:   "malformed selection JSON: Event, nothing allocated, waits for the pod to change",
		before: attachWorld(pod("default/p", 1, selecting(`[{"name":"a"`))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": ""},
			events: []string{"Warning AttachmentFailed default/p: attachment networks: annotation k8s.v1.cni.cncf.io/networks: malformed JSON"},
		},
	}, {
		name:   "two attachments on one interface name: Event naming both, nothing allocated",
		before: attachWorld(pod("default/p", 1, selecting("a@data,b@data"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": ""},
			events: []string{"Warning AttachmentFailed default/p: attachment networks: attachments default/a and default/b both ask for interface data"},
		},
	}, {
		name:   "a static address outside the attachment's Subnet: Event naming attachment and address, nothing allocated",
		before: attachWorld(pod("default/p", 1, selecting("a,b", pb+".kubernetes.io/ip_address", "172.17.0.9"))),
		steps:  []step{syncPodStep("default/p")},
		want: after{
			pods:   map[string]string{"default/p": ""},
			events: []string{"Warning AttachmentFailed default/p: attachment networks: attachment default/b: address 172.17.0.9 belongs to subnet att-a (172.17.0.0/24), not to subnet att-b"},
		},
	}, {
		name:   "a deleted pod: its primary and attachment ports go, every address is released",
		before: attachWorld(pod("default/p", 1, selecting("a,b"))),
		steps:  []step{syncPodStep("default/p"), deletePodStep("default/p"), syncPodStep("default/p")},
		want: after{
			released: []string{"released att-a 172.17.0.2", "released att-b 172.18.0.2", "released ovn-default 10.42.0.2"},
		},
	}, {
		name:   "a completed pod: the same",
		before: attachWorld(completedPod(pod("default/p", 1, merge(selecting("a"), allocatedOn("10.42.0.5"), attachedOn(pa, "att-a", "172.17.0.5"))))),
		steps:  []step{reconcileStep(), syncPodStep("default/p")},
		want:   after{pods: map[string]string{"default/p": "ovn-default 10.42.0.5 0a:58:0a:2a:00:05"}},
	}, {
		name: "reconcile alone claims annotated attachments before anything is allocated (a new pod cannot take them)",
		before: attachWorld(pod("default/p", 1, merge(selecting("a"), allocatedOn("10.42.0.5"), attachedOn(pa, "att-a", "172.17.0.2"))),
			pod("default/q", 2, selecting("a"))),
		steps: []step{reconcileStep(), syncPodStep("default/q")},
		want: after{
			pods: map[string]string{"default/q": "ovn-default 10.42.0.2 0a:58:0a:2a:00:02"},
			// p's primary port is restored by reconcile in one batch; its attachment's by its sync.
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:05 10.42.0.5", "lsp ovn-default q.default 0a:58:0a:2a:00:02 10.42.0.2",
				"lsp att-a q.default.a.default.ovn 0a:58:ac:11:00:03 172.17.0.3"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.5 0a:58:0a:2a:00:05",
				"alloc att-a default/p@a.default.ovn 172.17.0.2 0a:58:ac:11:00:02",
				"alloc ovn-default default/q 10.42.0.2 0a:58:0a:2a:00:02",
				"alloc att-a default/q@a.default.ovn 172.17.0.3 0a:58:ac:11:00:03"},
		},
	}, {
		name: "reconcile adopts annotated attachments into an empty IPAM; the sync recreates their ports",
		before: attachWorld(pod("default/p", 1, merge(selecting("a,b"), allocatedOn("10.42.0.5"),
			attachedOn(pa, "att-a", "172.17.0.5"), attachedOn(pb, "att-b", "172.18.0.6")))),
		steps: []step{reconcileStep(), syncPodStep("default/p")},
		want: after{
			pods: map[string]string{"default/p": "ovn-default 10.42.0.5 0a:58:0a:2a:00:05"},
			lsps: []string{"lsp ovn-default p.default 0a:58:0a:2a:00:05 10.42.0.5",
				"lsp att-a p.default.a.default.ovn 0a:58:ac:11:00:05 172.17.0.5",
				"lsp att-b p.default.b.default.ovn 0a:58:ac:12:00:06 172.18.0.6"},
			allocs: []string{"alloc ovn-default default/p 10.42.0.5 0a:58:0a:2a:00:05",
				"alloc att-a default/p@a.default.ovn 172.17.0.5 0a:58:ac:11:00:05",
				"alloc att-b default/p@b.default.ovn 172.18.0.6 0a:58:ac:12:00:06"},
		},
		attached: []attach{{"default/p", pa, "att-a 172.17.0.5 0a:58:ac:11:00:05"}, {"default/p", pb, "att-b 172.18.0.6 0a:58:ac:12:00:06"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, tt.before)
			r.check(tt.want, r.run(tt.steps))
			for _, a := range tt.attached {
				if got := r.attachNetwork(a.key, a.provider); got != a.want {
					t.Errorf("pod %s attachment %s annotated %q, want %q", a.key, a.provider, got, a.want)
				}
			}
		})
	}
}

// TestReconcileAttachmentPorts: an earlier term left the attachment port of a pod deleted
// meanwhile and the port of a live pod's attachment it never annotated; reconcile removes
// the first and releases its address, and keeps the second's address the pod's.
func TestReconcileAttachmentPorts(t *testing.T) {
	const pa = "a.default.ovn"
	r := newRig(t, attachWorld(pod("default/live", 1, merge(selecting("a"), allocatedOn("10.42.0.5")))))
	seed := func(owner, provider, sw, ip string) {
		ns, name, _ := strings.Cut(owner, "/")
		a := netip.MustParseAddr(ip)
		if err := r.c.nb.EnsurePodPort(r.ctx, northbound.PodPortSpec{Switch: sw, Name: annotation.AttachmentPortName(ns, name, provider),
			MAC: macOf(a), IPs: []netip.Addr{a}, Owner: owner, Provider: provider}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.c.ipam.Allocate(r.ctx, ipam.Request{Subnet: sw, Owner: attachOwner(owner, provider), IPs: []netip.Addr{a}}); err != nil {
			t.Fatal(err)
		}
	}
	seed("default/gone", pa, "att-a", "172.17.0.7")
	seed("default/live", pa, "att-a", "172.17.0.8")
	r.check(after{
		pods: map[string]string{"default/live": "ovn-default 10.42.0.5 0a:58:0a:2a:00:05"},
		lsps: []string{"lsp ovn-default live.default 0a:58:0a:2a:00:05 10.42.0.5",
			"lsp att-a live.default.a.default.ovn 0a:58:ac:11:00:08 172.17.0.8"},
		allocs: []string{"alloc ovn-default default/live 10.42.0.5 0a:58:0a:2a:00:05",
			"alloc att-a default/live@a.default.ovn 172.17.0.8 0a:58:ac:11:00:08"},
		released: []string{"released att-a 172.17.0.7"},
	}, r.run([]step{reconcileStep(), syncPodStep("default/live")}))
	if got := r.attachNetwork("default/live", pa); got != "att-a 172.17.0.8 0a:58:ac:11:00:08" {
		t.Errorf("live pod's attachment annotated %q, want its port's address", got)
	}
}

// TestNetworkErrorNoted: a pod whose selection cannot be served carries the reason its
// AttachmentFailed Event gives (annotation.NetworkErrorKey, read by its node's CNI ADD);
// once its selection is fixed it is allocated and the reason removed.
func TestNetworkErrorNoted(t *testing.T) {
	r := newRig(t, attachWorld(pod("default/p", 1, selecting("a,gone"))))
	r.run([]step{syncPodStep("default/p")})
	pods := r.kube.Fake.CoreV1().Pods("default")
	p, err := pods.Get(r.ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "attachment networks: attachment default/gone: NetworkAttachmentDefinition default/gone not found (retried)"
	if got := p.Annotations[annotation.NetworkErrorKey]; got != want {
		t.Fatalf("network error %q, want %q", got, want)
	}
	p.Annotations[multus.NetworksAnnotation] = "a"
	if _, err := pods.Update(r.ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.refresh()
	r.run([]step{syncPodStep("default/p")})
	p, err = pods.Get(r.ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := p.Annotations[annotation.NetworkErrorKey]; ok {
		t.Errorf("network error %q still there after the pod was allocated", got)
	}
	if got := r.attachNetwork("default/p", "a.default.ovn"); got != "att-a 172.17.0.2 0a:58:ac:11:00:02" {
		t.Errorf("attachment a annotated %q after the fix", got)
	}
}
