package securitygroups

import (
	"context"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/secgroup"
)

// The rig runs the groups' syncs one at a time on real parts below e2e (package ctltest): a
// real northbound ovsdb-server with the pods' ports on a switch, the dynamic fake for the
// groups, the role's typed fake for the pods, the term's informers.

type rig struct {
	t    *testing.T
	ctx  context.Context
	c    *Controller
	dyn  ctltest.SubnetClient
	kube *ctltest.Kube
	pods []*corev1.Pod
	nb   *ctltest.NB
	rec  *ctltest.Recorder
	log  *slog.Logger
}

// pod is an allocated pod of ovn-default at ip in the groups ("sg1,sg2"; "": none).
func pod(name, ip, groups string) *corev1.Pod {
	a := map[string]string{annotation.IPAddress: ip, annotation.MACAddress: "0a:58:0a:2a:00:02", annotation.CIDR: "10.42.0.0/16",
		annotation.Gateway: "10.42.0.1", annotation.LogicalSwitch: "ovn-default", annotation.Allocated: "true", annotation.Routed: "true"}
	if groups != "" {
		a[annotation.SecurityGroups] = groups
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name), Annotations: a},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

func newRig(t *testing.T, pods []*corev1.Pod, groups ...*unstructured.Unstructured) *rig {
	t.Helper()
	p := ctltest.Start(t)
	r := &rig{t: t, ctx: p.Ctx, nb: p.NB, rec: p.Events, log: p.Log, pods: pods}
	var others []runtime.Object
	for _, g := range groups {
		others = append(others, g)
	}
	r.dyn = ctltest.NewDynamic(t, nil, others...)
	args := []string{"ls-add", "ovn-default"}
	for _, pd := range pods {
		args = append(args, "--", "lsp-add", "ovn-default", pd.Name+"."+pd.Namespace)
	}
	r.nb.Server.Run(t, "ovn-nbctl", args...)
	objs := make([]runtime.Object, len(pods))
	for i, pd := range pods {
		objs[i] = pd
	}
	r.kube = ctltest.NewKube(t, objs...)
	r.start()
	return r
}

// start begins a term: a new Controller with its informers, reconciled.
func (r *rig) start() {
	r.t.Helper()
	r.c = New(Request{Dynamic: r.dyn, NB: r.nb.Client, Events: r.rec, Log: r.log, Hosts: []netip.Prefix{netip.MustParsePrefix("100.64.0.0/16")}})
	ctltest.RunInformers(r.ctx, r.t, r.kube, r.c.Register)
	if err := r.c.Reconcile(r.ctx); err != nil {
		r.t.Fatalf("reconcile: %v", err)
	}
}

// groups drives the term's SecurityGroups: a change written, waited for in the informer, synced.
func (r *rig) groups() ctltest.Objects {
	return ctltest.Objects{T: r.t, Ctx: r.ctx, Dyn: r.dyn, Resource: kubeovn.SecurityGroupResource, Cache: r.c.groups, Sync: r.c.sync}
}

// update changes a group's spec, waits until the informer has it, and syncs it.
func (r *rig) update(name string, change func(*kubeovn.SecurityGroupSpec)) {
	r.t.Helper()
	ctltest.UpdateSpec(r.groups(), name, change)
}

// remove marks a group deleted as the API server does while a finalizer holds it.
func (r *rig) remove(name string) {
	r.t.Helper()
	r.groups().Remove(name)
}

func (r *rig) sync(name string) {
	r.t.Helper()
	if err := r.c.sync(r.ctx, name); err != nil {
		r.t.Fatalf("sync security group %s: %v", name, err)
	}
}

// setPodGroups changes a pod's annotation, waits until the informer has it, and syncs the
// groups named before and after.
func (r *rig) setPodGroups(name, groups string) {
	r.t.Helper()
	pods := r.kube.Client.Pods("ns")
	p, err := pods.Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	before := GroupsOf(p)
	p.Annotations[annotation.SecurityGroups] = groups
	if _, err := pods.Update(r.ctx, p, metav1.UpdateOptions{}); err != nil {
		r.t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(r.ctx, time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		got, err := r.c.pods.Pods("ns").Get(name)
		return err == nil && got.Annotations[annotation.SecurityGroups] == groups, nil
	})
	if err != nil {
		r.t.Fatalf("pod %s change never reached the informer", name)
	}
	for _, g := range append(before, GroupsOf(p)...) {
		r.sync(g)
	}
}

// rows are the port groups (the fence's ACLs left out) and address sets.
func (r *rig) rows() []string {
	return r.nb.PortGroupRows(r.t, secgroup.HostsPriority, secgroup.BasePriority, secgroup.DropPriority)
}

// group returns the group and its conditions as "TYPE=STATUS REASON".
func (r *rig) group(name string) (*kubeovn.SecurityGroup, []string) {
	r.t.Helper()
	u, err := r.dyn.Resource(kubeovn.SecurityGroupResource).Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("get security group %s: %v", name, err)
	}
	sg, err := kubeovn.SecurityGroupFrom(u)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, c := range sg.Status.Conditions {
		out = append(out, c.Type+"="+c.Status+" "+c.Reason)
	}
	slices.Sort(out)
	return sg, out
}
