package vpcs

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/controller/internal/ctltest"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// A Vpc whose spec does not read (a field of the wrong type, which a CRD without a schema
// lets through) is refused under its own name: its status says why and keeps what it said
// before, one Event names it, and the routes applied before stay.
func TestVpcUnreadableSpec(t *testing.T) {
	subnets := []*kubeovn.Subnet{validated("a1", "vpc-a", "10.50.0.0/24")}
	r := newRig(t, subnets, ctltest.Vpc(t, "vpc-a", goodSpec))
	if err := r.nb.Client.EnsureVpcRouter(r.ctx, "vpc-a"); err != nil {
		t.Fatal(err)
	}
	o := r.vpcObjects()
	if err := o.Sync(r.ctx, "vpc-a"); err != nil {
		t.Fatal(err)
	}
	u, err := r.dyn.Resource(kubeovn.VpcResource).Get(r.ctx, "vpc-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"].(map[string]any)["staticRoutes"] = "0.0.0.0/0 via 10.50.0.254"
	o.Write(u)

	if d := ctltest.Diff(r.vpcRows(), goodRows); d != "" {
		t.Errorf("custom routers:%s", d)
	}
	u, err = r.dyn.Resource(kubeovn.VpcResource).Get(r.ctx, "vpc-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := kubeovn.UnreadVpc(u)
	var conds []string
	for _, c := range v.Status.Conditions {
		if c.Type != kubeovn.ConditionUnsupported {
			conds = append(conds, c.Type+"="+c.Status+" "+c.Reason)
		}
	}
	slices.Sort(conds)
	if d := ctltest.Diff(conds, refused(ReasonInvalidSpec)); d != "" {
		t.Errorf("vpc-a conditions:%s", d)
	}
	if v.Status.Router != "vpc-a" || !slices.Equal(v.Status.Subnets, []string{"a1"}) || !slices.Equal(v.Status.VpcPeerings, []string{}) {
		t.Errorf("vpc-a status %+v, want its router, its Subnet and no peering", v.Status)
	}
	r.rec.Check(t, []string{"Warning InvalidSpec vpc-a: read vpc vpc-a"})
}
