package subnets

import (
	"context"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// writeStatus sets the Subnet's conditions (Kube-OVN's Ready, Validated and Error, and
// Unsupported naming the spec fields edgeovn does not implement) and its address counts, and
// patches the status only when something changed. A refusal is also a Warning Event, once per
// change of its message.
func (s *Controller) writeStatus(ctx context.Context, u *unstructured.Unstructured, sn *kubeovn.Subnet, ref *refusal) error {
	st := sn.Status
	st.Conditions = slices.Clone(st.Conditions)
	now := metav1.Now()
	changed := false
	set := func(t, status, reason, msg string) { changed = st.SetCondition(t, status, reason, msg, now) || changed }
	switch {
	case ref != nil && ref.reason == ReasonSubnetInUse:
		set(kubeovn.ConditionReady, "False", ref.reason, ref.Error())
	case ref != nil && s.inForce(sn):
		// A refused change of an applied subnet that keeps its CIDRs: its switch, addresses,
		// host routes and isolation stay as applied, so it stays Ready.
		set(kubeovn.ConditionValidated, "False", ref.reason, ref.Error())
		set(kubeovn.ConditionReady, "True", ReasonSubnetReady, "change refused, the spec applied before stays in force: "+ref.Error())
		set(kubeovn.ConditionError, "True", ref.reason, ref.Error())
	case ref != nil:
		kubeovn.SetRefused(set, ref.reason, ref.Error(), "not applied")
	default:
		kubeovn.SetApplied(set, ReasonSubnetValid, ReasonSubnetReady)
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if un := kubeovn.Unsupported(spec); len(un) > 0 {
		set(kubeovn.ConditionUnsupported, "True", "UnsupportedFields",
			"edgeovn does not implement "+strings.Join(un, ", ")+": they have no effect")
	} else {
		set(kubeovn.ConditionUnsupported, "False", "AllFieldsSupported", "")
	}
	if ref != nil && changed {
		s.event(u, ref.reason, ref.Error())
	}
	counted := s.count(sn.Name, &st)
	counted = s.setU2OStatus(sn.Name, &st) || counted
	if a, _ := s.get(sn.Name); a.gateway != st.ActivateGateway {
		st.ActivateGateway, counted = a.gateway, true
	}
	if !changed && !counted {
		return nil
	}
	return s.writer().PatchStatus(ctx, sn.Name, st)
}

// inForce reports whether the subnet is applied with the CIDRs its spec now gives: a refused
// change of another field (a bad allowSubnets entry, say) leaves it working as applied.
func (s *Controller) inForce(sn *kubeovn.Subnet) bool {
	a, ok := s.get(sn.Name)
	if !ok || a.deleting {
		return false
	}
	// Only cidrBlock counts: a refused gateway or excludeIps change leaves the applied network
	// in force, so the Subnet stays Ready.
	cidrs, err := kubeovn.CIDRs(sn.Spec)
	return err == nil && slices.Equal(cidrs, a.net.CIDRs)
}

// count sets the address counts from the IPAM; it reports whether they changed.
func (s *Controller) count(name string, st *kubeovn.SubnetStatus) bool {
	before := [4]float64{st.V4UsingIPs, st.V4AvailableIPs, st.V6UsingIPs, st.V6AvailableIPs}
	st.V4UsingIPs, st.V4AvailableIPs, st.V6UsingIPs, st.V6AvailableIPs = 0, 0, 0, 0
	for _, u := range s.req.IPAM.Usage() {
		if u.Subnet != name {
			continue
		}
		if u.CIDR.Addr().Is4() {
			st.V4UsingIPs, st.V4AvailableIPs = float64(u.Used), u.Capacity-float64(u.Used)
		} else {
			st.V6UsingIPs, st.V6AvailableIPs = float64(u.Used), u.Capacity-float64(u.Used)
		}
	}
	return before != [4]float64{st.V4UsingIPs, st.V4AvailableIPs, st.V6UsingIPs, st.V6AvailableIPs}
}

// writer writes the Subnets' finalizer and status.
func (s *Controller) writer() kubeovn.Writer {
	return kubeovn.Writer{Dynamic: s.dyn, Resource: kubeovn.SubnetResource, Kind: "subnet", Finalizer: SubnetFinalizer}
}
