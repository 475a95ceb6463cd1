package vpcs

import (
	"context"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// unsupportedVpc are the Vpc spec fields edgeovn does not implement yet.
var unsupportedVpc = []string{"enableBfd", "bfdPort", "extraExternalSubnets"}

// writeStatus sets Kube-OVN's status fields (standby, default, router, defaultLogicalSwitch,
// subnets, vpcPeerings, enableExternal) and the conditions Ready, Validated, Error and
// edgeovn's Unsupported, and patches the status only when something changed. A refusal is
// also a Warning Event, once per change of its message.
func (c *Controller) writeStatus(ctx context.Context, u *unstructured.Unstructured, v *kubeovn.Vpc, subnets []vpcSubnet, ref *refusal) error {
	st := v.Status
	st.Conditions = slices.Clone(st.Conditions)
	now := metav1.Now()
	changed := false
	set := func(t, status, reason, msg string) { changed = st.SetCondition(t, status, reason, msg, now) || changed }
	switch {
	case ref != nil && ref.reason == ReasonInUse:
		set(kubeovn.ConditionReady, "False", ref.reason, ref.Error())
	case ref != nil:
		kubeovn.SetRefused(set, ref.reason, ref.Error(), "not applied (the routes applied before stay)")
	default:
		kubeovn.SetApplied(set, ReasonReady, ReasonReady)
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if un := unsupported(spec, v.Name); len(un) > 0 {
		set(kubeovn.ConditionUnsupported, "True", "UnsupportedFields", "edgeovn does not implement "+strings.Join(un, ", ")+": they have no effect")
	} else {
		set(kubeovn.ConditionUnsupported, "False", "AllFieldsSupported", "")
	}
	if ref != nil && changed {
		c.event(u, ref.reason, ref.Error())
	}
	st.Standby, st.Default, st.Router = true, v.Name == kubeovn.DefaultVpc, v.Name
	// status.enableExternal is the OVN NAT family's (package ovnnat): it is kept as it is.
	st.DefaultLogicalSwitch = v.Spec.DefaultSubnet
	if st.Default && st.DefaultLogicalSwitch == "" {
		st.DefaultLogicalSwitch = kubeovn.DefaultSubnet
	}
	st.Subnets = []string{}
	for _, sn := range subnets {
		st.Subnets = append(st.Subnets, sn.name)
	}
	if ref == nil {
		st.VpcPeerings = []string{}
		for _, p := range v.Spec.VpcPeerings {
			st.VpcPeerings = append(st.VpcPeerings, p.RemoteVpc)
		}
	} else if st.VpcPeerings == nil {
		st.VpcPeerings = []string{} // a refused spec leaves the peerings applied before
	}
	return c.writer().UpdateStatus(ctx, v.Name, v.Status, st)
}

// unsupported lists the set fields of spec edgeovn does not implement; on the default VPC
// the routes too (the cluster router's routes and policies are the core's).
func unsupported(spec map[string]any, name string) []string {
	fields := unsupportedVpc
	if name == kubeovn.DefaultVpc {
		fields = append(slices.Clone(fields), "staticRoutes", "policyRoutes", "enableExternal")
	}
	var out []string
	for _, f := range fields {
		switch v := spec[f].(type) {
		case nil:
		case bool:
			if v {
				out = append(out, f)
			}
		case []any:
			if len(v) > 0 {
				out = append(out, f)
			}
		case map[string]any:
			if en, _ := v["enabled"].(bool); en {
				out = append(out, f)
			}
		default:
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// writer writes the Vpcs' finalizer and status.
func (c *Controller) writer() kubeovn.Writer {
	return kubeovn.Writer{Dynamic: c.req.Dynamic, Resource: kubeovn.VpcResource, Kind: "vpc", Finalizer: VpcFinalizer}
}
