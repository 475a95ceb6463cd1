package subnets

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// The rig runs the Subnets' syncs one at a time on real parts below e2e (package ctltest): a
// real northbound ovsdb-server holding the cluster router, the SQLite IPAM, the fake API for
// the Nodes and Namespaces and a dynamic fake for the Subnets. Their informers run as in a
// term; a step that changes a Subnet waits until its informer has the change, then syncs it,
// so each sync sees one known state and nothing else runs on its own.

// world is the state before the term.
type world struct {
	nodes   []*corev1.Node
	subnets []*kubeovn.Subnet
	// holds are addresses live pods hold from an earlier term.
	holds []hold
	// vpcs are kubeovn.io/v1 Vpc objects (ctltest.Vpc).
	vpcs []*unstructured.Unstructured
}

type hold struct{ subnet, pod, ip string }

type rig struct {
	t    *testing.T
	ctx  context.Context
	s    *Controller
	dyn  ctltest.SubnetClient
	nb   *ctltest.NB
	ipam *ctltest.IPAM
	rec  *ctltest.Recorder
}

// newRig starts a term's Subnets as the controller does: the cluster router in northbound and
// the join subnet in the IPAM (the core's topology), then the informers, then every Subnet
// applied; the pods' holds from an earlier term are written after.
func newRig(t *testing.T, w world) *rig {
	t.Helper()
	p := ctltest.Start(t)
	ctx, log := p.Ctx, p.Log
	r := &rig{t: t, ctx: ctx, nb: p.NB, ipam: p.IPAM, rec: p.Events}
	objs := []runtime.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}}
	for _, n := range w.nodes {
		objs = append(objs, n)
	}
	for _, h := range w.holds { // the pods are live
		ns, name, _ := strings.Cut(h.pod, "/")
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	}
	kube := ctltest.NewKube(t, objs...)
	var others []runtime.Object
	for _, v := range w.vpcs {
		others = append(others, v)
	}
	r.dyn = ctltest.NewDynamic(t, w.subnets, others...)
	r.topology()
	f := kubeapi.NewInformers(kube.Client, kubeapi.InformerOptions{})
	pods, nodes := f.Pods(), f.Nodes()
	r.s = New(Request{Kube: kube.Client, Dynamic: r.dyn, NB: r.nb.Client, IPAM: r.ipam.IPAM, Events: r.rec, Log: log,
		Pods: pods.Lister(), Nodes: nodes.Lister(), ClusterCIDRs: []netip.Prefix{ctltest.ClusterCIDR},
		ClusterGateways: []netip.Addr{ctltest.ClusterGateway}, JoinCIDRs: []netip.Prefix{ctltest.JoinCIDR}, ServiceCIDRs: []netip.Prefix{ctltest.ServiceCIDR}, Router: ctltest.Router,
		EnqueueUnallocated: func() {}})
	synced, err := r.s.Register(f)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	ictx, stop := context.WithCancel(ctx)
	f.Start(ictx)
	t.Cleanup(func() { stop(); f.Shutdown(); r.s.Shutdown() })
	synced = append(synced, pods.Informer().HasSynced, nodes.Informer().HasSynced)
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.Fatal("informers never synced")
	}
	if err := r.dyn.Watches.Wait(ctx, "subnets"); err != nil { // the steps' changes reach it
		t.Fatal(err)
	}
	if err := r.s.ApplyAll(ctx); err != nil {
		t.Fatalf("apply subnets: %v", err)
	}
	for _, h := range w.holds {
		r.hold(h)
	}
	return r
}

// topology writes what the core's topology gives the Subnets: the cluster router with the join
// switch in northbound, the join subnet in the IPAM.
func (r *rig) topology() {
	r.t.Helper()
	joinGW := ctltest.JoinCIDR.Addr().Next()
	if err := r.nb.Client.EnsureCluster(r.ctx, northbound.ClusterSpec{Router: ctltest.Router, JoinSwitch: kubeovn.JoinSubnet,
		JoinCIDR: ctltest.JoinCIDR, JoinGateway: joinGW}); err != nil {
		r.t.Fatalf("ensure cluster router: %v", err)
	}
	if err := r.ipam.EnsureSubnet(r.ctx, ipam.Subnet{Name: kubeovn.JoinSubnet, CIDRs: []netip.Prefix{ctltest.JoinCIDR},
		Gateways: []netip.Addr{joinGW}}); err != nil {
		r.t.Fatalf("ensure ipam subnet join: %v", err)
	}
}

// hold gives a pod an address and its port, as the core does for a pod of the subnet.
func (r *rig) hold(h hold) {
	r.t.Helper()
	a, err := r.ipam.Allocate(r.ctx, ipam.Request{Subnet: h.subnet, Owner: ipam.Owner{Pod: h.pod, Interface: "eth0"},
		IPs: []netip.Addr{netip.MustParseAddr(h.ip)}})
	if err != nil {
		r.t.Fatalf("hold %v: %v", h, err)
	}
	ns, name, _ := strings.Cut(h.pod, "/")
	if err := r.nb.Client.EnsurePodPort(r.ctx, northbound.PodPortSpec{Switch: h.subnet, Name: annotation.PortName(ns, name), MAC: a.MAC,
		IPs: a.IPs, Owner: h.pod}); err != nil {
		r.t.Fatalf("port of %v: %v", h, err)
	}
}

// step is a change in the API followed by the Subnet's sync, as its informer's event would.
type step struct {
	name string
	do   func(r *rig) error
}

// updateStep changes a Subnet's spec and syncs it once its informer has the change.
func updateStep(name string, change func(*kubeovn.SubnetSpec)) step {
	return step{"update subnet " + name, func(r *rig) error {
		u, err := r.dyn.Resource(kubeovn.SubnetResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sn, err := kubeovn.FromUnstructured(u)
		if err != nil {
			return err
		}
		change(&sn.Spec)
		nu, err := kubeovn.ToUnstructured(sn)
		if err != nil {
			return err
		}
		if _, err := r.dyn.Resource(kubeovn.SubnetResource).Update(r.ctx, nu, metav1.UpdateOptions{}); err != nil {
			return err
		}
		r.waitSpec(name, nu.Object["spec"])
		return r.s.sync(r.ctx, name)
	}}
}

// rawSpecStep sets one field of a Subnet's spec as it is, whatever its type (a CRD without a
// schema lets a wrong type through), and syncs it once its informer has the change.
func rawSpecStep(name, field string, value any) step {
	return step{"set subnet " + name + " spec." + field, func(r *rig) error {
		u, err := r.dyn.Resource(kubeovn.SubnetResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(u.Object, value, "spec", field); err != nil {
			return err
		}
		if _, err := r.dyn.Resource(kubeovn.SubnetResource).Update(r.ctx, u, metav1.UpdateOptions{}); err != nil {
			return err
		}
		r.waitSpec(name, u.Object["spec"])
		return r.s.sync(r.ctx, name)
	}}
}

// deleteStep marks a Subnet deleted as the API server does while a finalizer holds it (its
// deletionTimestamp set) and syncs it once its informer has the change.
func deleteStep(name string) step {
	return step{"delete subnet " + name, func(r *rig) error {
		u, err := r.dyn.Resource(kubeovn.SubnetResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		u.SetDeletionTimestamp(&now)
		if _, err := r.dyn.Resource(kubeovn.SubnetResource).Update(r.ctx, u, metav1.UpdateOptions{}); err != nil {
			return err
		}
		r.waitObject(name, func(u *unstructured.Unstructured) bool { return u.GetDeletionTimestamp() != nil })
		return r.s.sync(r.ctx, name)
	}}
}

// releaseStep gives a pod's address and port back, as the core does when the pod goes, then
// syncs the Subnet, as the core's Touched would.
func releaseStep(h hold) step {
	return step{"release " + h.pod, func(r *rig) error {
		ns, name, _ := strings.Cut(h.pod, "/")
		if err := r.nb.Client.DeletePodPort(r.ctx, h.subnet, annotation.PortName(ns, name)); err != nil {
			return err
		}
		if err := r.ipam.ReleasePod(r.ctx, h.pod); err != nil {
			return err
		}
		return r.s.sync(r.ctx, h.subnet)
	}}
}

// waitObject waits until the Subnet informer's cache holds an object ok accepts.
func (r *rig) waitObject(name string, ok func(*unstructured.Unstructured) bool) {
	r.t.Helper()
	err := wait.PollUntilContextCancel(r.ctx, time.Millisecond, true, func(context.Context) (bool, error) {
		obj, err := r.s.lister.Get(name)
		u, isU := obj.(*unstructured.Unstructured)
		return err == nil && isU && ok(u), nil
	})
	if err != nil {
		r.t.Fatalf("subnet %s change never reached the informer: %v", name, err)
	}
}

// waitSpec waits until the Subnet informer's cache holds the spec: the update's event.
func (r *rig) waitSpec(name string, spec any) {
	r.t.Helper()
	r.waitObject(name, func(u *unstructured.Unstructured) bool { return equality.Semantic.DeepEqual(u.Object["spec"], spec) })
}

// conditions returns the Subnet's conditions as "TYPE=STATUS REASON", sorted.
func (r *rig) conditions(name string) []string {
	r.t.Helper()
	u, err := r.dyn.Resource(kubeovn.SubnetResource).Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("get subnet %s: %v", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		out = append(out, m["type"].(string)+"="+m["status"].(string)+" "+m["reason"].(string))
	}
	slices.Sort(out)
	return out
}
