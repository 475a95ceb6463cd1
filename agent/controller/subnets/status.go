package subnets

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

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
		set(kubeovn.ConditionValidated, "False", ref.reason, ref.Error())
		set(kubeovn.ConditionReady, "False", ref.reason, "not applied: "+ref.Error())
		set(kubeovn.ConditionError, "True", ref.reason, ref.Error())
	default:
		set(kubeovn.ConditionValidated, "True", ReasonSubnetValid, "")
		set(kubeovn.ConditionReady, "True", ReasonSubnetReady, "")
		set(kubeovn.ConditionError, "False", "NoError", "")
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
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return fmt.Errorf("encode status of subnet %s: %w", sn.Name, err)
	}
	_, err = s.dyn.Resource(kubeovn.SubnetResource).Patch(ctx, sn.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("write status of subnet %s: %w", sn.Name, err)
	}
	return nil
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

// setFinalizer adds or removes SubnetFinalizer, guarded by the object's resourceVersion.
func (s *Controller) setFinalizer(ctx context.Context, u *unstructured.Unstructured, want bool) error {
	fs := u.GetFinalizers()
	if slices.Contains(fs, SubnetFinalizer) == want {
		return nil
	}
	if want {
		fs = append(slices.Clone(fs), SubnetFinalizer)
	} else {
		fs = slices.DeleteFunc(slices.Clone(fs), func(f string) bool { return f == SubnetFinalizer })
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": fs, "resourceVersion": u.GetResourceVersion()}})
	if err != nil {
		return fmt.Errorf("encode finalizers of subnet %s: %w", u.GetName(), err)
	}
	if _, err := s.dyn.Resource(kubeovn.SubnetResource).Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("set finalizer of subnet %s: %w", u.GetName(), err)
	}
	return nil
}
