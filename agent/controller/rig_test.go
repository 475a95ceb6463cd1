package controller

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// The rig runs the controller role's core steps (syncPod, reconcile, syncNode) one at a time
// on real parts below e2e (package ctltest): a real northbound ovsdb-server, the SQLite IPAM,
// and the fake API behind the role's own kubeapi client. The pods' and nodes' listers are
// filled from the fake API before the term starts and after every step, so each step sees
// what the informers would have delivered by then; the Subnets' and Namespaces' informers run
// as in a term (package subnets owns them), synced before the Subnets are applied. No worker
// runs: nothing happens but the steps.

// world is the state before the term: the API's objects, and the rows an earlier term left.
type world struct {
	pods    []*corev1.Pod
	nodes   []*corev1.Node
	subnets []*kubeovn.Subnet
	// ports are pod ports in northbound and allocs addresses in the IPAM database, as an
	// earlier term wrote them (before this term's reconcile).
	ports  []seedPort
	allocs []seedPort
	// nads are NetworkAttachmentDefinitions (ctltest.NAD).
	nads []runtime.Object
}

// seedPort is a pod port or an allocation of an earlier term; a pod key without a slash is a
// node's join address (allocs only).
type seedPort struct {
	subnet, owner, ip string
}

// rig is one term of the controller role on real parts.
type rig struct {
	t    *testing.T
	ctx  context.Context
	c    *Controller
	kube *ctltest.Kube
	dyn  ctltest.SubnetClient
	nb   *ctltest.NB
	ipam *ctltest.IPAM
	rec  *ctltest.Recorder

	pods, nodes cache.Indexer
}

// newRig starts the term as Run does up to the pods' reconcile: the topology, then the
// built-in and the world's Subnets applied; then the rows an earlier term left are written
// (their switches are the topology's and the Subnets').
func newRig(t *testing.T, w world) *rig {
	t.Helper()
	p := ctltest.Start(t)
	ctx, log := p.Ctx, p.Log
	r := &rig{t: t, ctx: ctx, nb: p.NB, ipam: p.IPAM, rec: p.Events}
	var objs []runtime.Object
	var nss []string // the pods' namespaces
	for _, p := range w.pods {
		objs = append(objs, p)
		nss = append(nss, p.Namespace)
	}
	slices.Sort(nss)
	for _, ns := range slices.Compact(nss) {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	for _, n := range w.nodes {
		objs = append(objs, n)
	}
	r.kube = ctltest.NewKube(t, objs...)
	r.dyn = ctltest.NewDynamic(t, w.subnets, w.nads...)

	r.pods = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, byNodeIndex: podNodeName})
	r.nodes = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	c := &Controller{
		req: Request{Kube: r.kube.Client, Dynamic: r.dyn, Router: ctltest.Router, Log: log,
			Cluster:    config.Cluster{ClusterCIDR: ctltest.ClusterCIDR, ServiceCIDRs: []netip.Prefix{ctltest.ServiceCIDR}},
			Controller: config.Controller{ClusterGateway: ctltest.ClusterGateway, JoinCIDR: ctltest.JoinCIDR, Workers: 1}},
		log: log, ipam: r.ipam.IPAM, nb: r.nb.Client, events: r.rec,
		pods: corelisters.NewPodLister(r.pods), nodes: corelisters.NewNodeLister(r.nodes), podsByNode: r.pods,
		nodeQueue: queue.New("nodes"), stsQueue: queue.New("statefulsets"), phases: newTermPhases(),
	}
	c.queue = queue.NewPriority("pods", c.awaitsAllocation)
	r.c = c
	c.subnets = c.newSubnets()
	t.Cleanup(func() {
		c.queue.ShutDown()
		c.nodeQueue.ShutDown()
		c.stsQueue.ShutDown()
	})
	r.refresh()
	if err := c.ensureTopology(ctx); err != nil {
		t.Fatalf("ensure topology: %v", err)
	}
	r.startSubnets()
	r.seed(w)
	return r
}

// startSubnets runs the Subnets' and Namespaces' informers on the fake API, as the term does,
// and applies every Subnet once they have synced.
func (r *rig) startSubnets() {
	r.t.Helper()
	f := kubeapi.NewInformers(r.kube.Client, kubeapi.InformerOptions{Transform: slim})
	synced, err := r.c.subnets.Register(f)
	if err != nil {
		r.t.Fatalf("register subnets: %v", err)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	f.Start(ctx)
	r.t.Cleanup(func() { cancel(); f.Shutdown(); r.c.subnets.Shutdown() })
	if err := waitSynced(r.ctx, synced); err != nil {
		r.t.Fatal(err)
	}
	if err := r.c.subnets.ApplyAll(r.ctx); err != nil {
		r.t.Fatalf("apply subnets: %v", err)
	}
}

// seed writes what an earlier term left: pod ports in northbound, allocations in the IPAM.
func (r *rig) seed(w world) {
	r.t.Helper()
	for _, s := range w.allocs {
		o := owner(s.owner)
		if !strings.Contains(s.owner, "/") {
			o = nodeOwner(s.owner)
		}
		if _, err := r.c.ipam.Allocate(r.ctx, ipam.Request{Subnet: s.subnet, Owner: o, IPs: []netip.Addr{netip.MustParseAddr(s.ip)}}); err != nil {
			r.t.Fatalf("seed ipam %v: %v", s, err)
		}
	}
	for _, p := range w.ports {
		ns, name, _ := strings.Cut(p.owner, "/")
		ip := netip.MustParseAddr(p.ip)
		if err := r.c.nb.EnsurePodPort(r.ctx, northbound.PodPortSpec{Switch: p.subnet, Name: annotation.PortName(ns, name),
			MAC: macOf(ip), IPs: []netip.Addr{ip}, Owner: p.owner}); err != nil {
			r.t.Fatalf("seed port %v: %v", p, err)
		}
	}
}

// macOf is the MAC the IPAM derives from an IPv4 address (0a:58 and its four octets).
func macOf(ip netip.Addr) net.HardwareAddr {
	b := ip.As4()
	return net.HardwareAddr{0x0a, 0x58, b[0], b[1], b[2], b[3]}
}

// refresh fills the listers from the fake API, as the informers would.
func (r *rig) refresh() {
	r.t.Helper()
	pods, err := r.kube.Fake.CoreV1().Pods("").List(r.ctx, metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	nodes, err := r.kube.Fake.CoreV1().Nodes().List(r.ctx, metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	replace(r.t, r.pods, pods.Items)
	replace(r.t, r.nodes, nodes.Items)
}

func replace[T any](t *testing.T, idx cache.Indexer, items []T) {
	t.Helper()
	objs := make([]any, len(items))
	for i := range items {
		objs[i] = &items[i]
	}
	if err := idx.Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
}

// step is one thing that happens in the term: a sync, or a change in the API.
type step struct {
	name string
	do   func(r *rig) error
}

func syncPodStep(key string) step {
	return step{"sync pod " + key, func(r *rig) error { return r.c.syncPod(r.ctx, key) }}
}

func syncNodeStep(name string) step {
	return step{"sync node " + name, func(r *rig) error { return r.c.syncNode(r.ctx, name) }}
}

func reconcileStep() step {
	return step{"reconcile", func(r *rig) error { return r.c.reconcile(r.ctx) }}
}

func deleteNodeStep(name string) step {
	return step{"delete node " + name, func(r *rig) error {
		return r.kube.Fake.CoreV1().Nodes().Delete(r.ctx, name, metav1.DeleteOptions{})
	}}
}

// run runs the steps in order, refreshing the listers after each, and returns each step's
// error ("" for none).
func (r *rig) run(steps []step) []string {
	r.t.Helper()
	var errs []string
	for _, s := range steps {
		err := s.do(r)
		msg := ""
		if err != nil {
			msg = err.Error()
			r.t.Logf("%s: %v", s.name, err)
		}
		errs = append(errs, msg)
		r.refresh()
	}
	return errs
}

// podNetwork returns the pod's allocation as its annotations say, "" when it has none:
// "SWITCH IP MAC".
func (r *rig) podNetwork(key string) string {
	r.t.Helper()
	ns, name, _ := strings.Cut(key, "/")
	p, err := r.kube.Fake.CoreV1().Pods(ns).Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("get pod %s: %v", key, err)
	}
	return networkText(p.Annotations)
}

// nodeNetwork returns the node's join allocation as its annotations say, "" when it has none
// or is gone.
func (r *rig) nodeNetwork(name string) string {
	r.t.Helper()
	n, err := r.kube.Fake.CoreV1().Nodes().Get(r.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	if err != nil {
		r.t.Fatalf("get node %s: %v", name, err)
	}
	return networkText(n.Annotations)
}

func networkText(a map[string]string) string {
	n, err := annotation.Decode(a)
	if err != nil {
		return ""
	}
	ips := make([]string, len(n.IPs))
	for i, ip := range n.IPs {
		ips[i] = ip.String()
	}
	return n.Switch + " " + strings.Join(ips, ",") + " " + n.MAC.String()
}

// nbRows are the northbound rows whose lines start with one of prefixes.
func (r *rig) nbRows(prefixes ...string) []string {
	r.t.Helper()
	return ctltest.WithPrefix(r.nb.Rows(r.t), prefixes...)
}

// joinOn is the annotations edgeovn writes on a node for its join address ip.
func joinOn(ip string) map[string]string {
	a := netip.MustParseAddr(ip)
	return annotation.Encode(annotation.Network{Switch: kubeovn.JoinSubnet, IPs: []netip.Addr{a}, MAC: macOf(a),
		CIDRs: []netip.Prefix{ctltest.JoinCIDR}, Gateways: []netip.Addr{ctltest.JoinCIDR.Addr().Next()}})
}

// node is ctltest.Node with annotations.
func node(name, ip string, annotations map[string]string) *corev1.Node {
	n := ctltest.Node(name, ip)
	n.Annotations = annotations
	return n
}

// ipamRows are the IPAM database's rows whose lines start with one of prefixes.
func (r *rig) ipamRows(prefixes ...string) []string {
	r.t.Helper()
	return ctltest.WithPrefix(r.ipam.Rows(r.ctx, r.t), prefixes...)
}

// pod builds a pod scheduled on node n1, created at second sec of the test's clock (older
// claims win conflicts).
func pod(key string, sec int, annotations map[string]string) *corev1.Pod {
	ns, name, _ := strings.Cut(key, "/")
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), Annotations: annotations,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC))},
		Spec:   corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

// allocatedOn is the annotations edgeovn writes for ip on the default subnet.
func allocatedOn(ip string) map[string]string {
	a := netip.MustParseAddr(ip)
	return annotation.Encode(annotation.Network{Switch: kubeovn.DefaultSubnet, IPs: []netip.Addr{a}, MAC: macOf(a),
		CIDRs: []netip.Prefix{ctltest.ClusterCIDR}, Gateways: []netip.Addr{ctltest.ClusterGateway}})
}
