package vpcs

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// The rig runs the Vpcs' syncs one at a time on real parts below e2e (package ctltest): a
// real northbound ovsdb-server with the cluster router, the dynamic fake for the Vpcs and the
// Subnets (marked validated, as the Subnets feature leaves them), the term's informers.

type rig struct {
	t   *testing.T
	ctx context.Context
	c   *Controller
	dyn ctltest.SubnetClient
	nb  *ctltest.NB
	rec *ctltest.Recorder
	log *slog.Logger
}

// validated is a Subnet of vpc as the Subnets feature leaves it once applied.
func validated(name, vpc, cidr string) *kubeovn.Subnet {
	sn := ctltest.Subnet(name, kubeovn.SubnetSpec{Protocol: kubeovn.ProtocolIPv4, CIDRBlock: cidr, Vpc: vpc})
	sn.Status.SetCondition(kubeovn.ConditionValidated, "True", "ValidateLogicalSwitchSuccess", "", metav1.Now())
	return sn
}

func newRig(t *testing.T, subnets []*kubeovn.Subnet, vpcs ...*unstructured.Unstructured) *rig {
	t.Helper()
	p := ctltest.Start(t)
	r := &rig{t: t, ctx: p.Ctx, nb: p.NB, rec: p.Events, log: p.Log}
	var others []runtime.Object
	for _, v := range vpcs {
		others = append(others, v)
	}
	r.dyn = ctltest.NewDynamic(t, subnets, others...)
	if err := r.nb.Client.EnsureCluster(r.ctx, northbound.ClusterSpec{Router: ctltest.Router, JoinSwitch: kubeovn.JoinSubnet,
		JoinCIDR: ctltest.JoinCIDR, JoinGateway: ctltest.JoinCIDR.Addr().Next()}); err != nil {
		t.Fatalf("ensure cluster router: %v", err)
	}
	r.start()
	return r
}

// start begins a term: a new Controller with its informers, reconciled.
func (r *rig) start() {
	r.t.Helper()
	r.c = New(Request{Dynamic: r.dyn, NB: r.nb.Client, Events: r.rec, Log: r.log})
	ctltest.RunInformers(r.ctx, r.t, ctltest.NewKube(r.t), r.c.Register)
	if err := r.c.Reconcile(r.ctx); err != nil {
		r.t.Fatalf("reconcile: %v", err)
	}
}

// vpcObjects drives the term's Vpcs: a change written, waited for in the informer, synced.
func (r *rig) vpcObjects() ctltest.Objects {
	return ctltest.Objects{T: r.t, Ctx: r.ctx, Dyn: r.dyn, Resource: kubeovn.VpcResource, Cache: r.c.vpcs, Sync: r.c.sync}
}

// update changes a Vpc's spec, waits until the informer has it, and syncs it.
func (r *rig) update(name string, change func(*kubeovn.VpcSpec)) {
	r.t.Helper()
	ctltest.UpdateSpec(r.vpcObjects(), name, change)
}

// remove marks a Vpc deleted as the API server does while a finalizer holds it.
func (r *rig) remove(name string) {
	r.t.Helper()
	r.vpcObjects().Remove(name)
}

// vpcRows are the router rows of the custom VPCs (the cluster router left out).
func (r *rig) vpcRows() []string {
	return slices.DeleteFunc(r.nb.RouterRows(r.t), func(l string) bool { return strings.Contains(l, ctltest.Router) })
}

// conditions returns the Vpc's conditions as "TYPE=STATUS REASON", Unsupported left out.
func (r *rig) vpc(name string) (*kubeovn.Vpc, []string) {
	r.t.Helper()
	u, err := r.dyn.Resource(kubeovn.VpcResource).Get(r.ctx, name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("get vpc %s: %v", name, err)
	}
	v, err := kubeovn.VpcFrom(u)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, c := range v.Status.Conditions {
		if c.Type != kubeovn.ConditionUnsupported {
			out = append(out, c.Type+"="+c.Status+" "+c.Reason)
		}
	}
	slices.Sort(out)
	return v, out
}

var metavOpts = metav1.DeleteOptions{}

// waitGone waits until the Subnet informer no longer has the Subnet.
func waitGone(t *testing.T, r *rig, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(r.ctx, time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		_, err := r.c.subnets.Get(name)
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("subnet %s deletion never reached the informer", name)
	}
}
