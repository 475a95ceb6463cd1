package subnets

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Reasons of an underlay Subnet's refusal.
const (
	ReasonVlanNotFound = "VlanNotFound"
	ReasonVlanInvalid  = "VlanInvalid"
)

// vlanTag is what an underlay Subnet's Vlan resolves to.
type vlanTag struct {
	id       int
	provider string
}

// registerVlans adds the Vlan informer: a Vlan's change (or its creation after the Subnet
// that names it) queues the Subnets that name it.
func (s *Controller) registerVlans() (cache.InformerSynced, error) {
	gi := kubeapi.DynamicInformer(s.dyn, kubeovn.VlanResource)
	s.vlans = gi.Lister()
	inf := gi.Informer()
	onVlan := func(obj any) {
		s.enqueueNamingVlan(eventName(obj))
		s.pokeVlanStatus()
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onVlan, UpdateFunc: func(_, obj any) { onVlan(obj) }, DeleteFunc: onVlan,
	}); err != nil {
		return nil, fmt.Errorf("watch vlans: %w", err)
	}
	go inf.Run(s.stop)
	return inf.HasSynced, nil
}

func (s *Controller) enqueueNamingVlan(vlan string) {
	if vlan == "" || s.inf == nil {
		return
	}
	for _, obj := range s.inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			// Every underlay Subnet: a Vlan's change may end another Vlan's conflict.
			if v, _, _ := unstructured.NestedString(u.Object, "spec", "vlan"); v != "" {
				s.queue.Add(u.GetName())
			}
		}
	}
}

// vlanOf resolves the Subnet's spec.vlan: a refusal names the field when the Vlan is missing
// or its spec is invalid.
func (s *Controller) vlanOf(sn *kubeovn.Subnet) (vlanTag, *refusal) {
	if s.vlans == nil {
		return vlanTag{}, &refusal{ReasonVlanNotFound, fmt.Errorf("spec.vlan %q: vlans are not watched", sn.Spec.Vlan)}
	}
	obj, err := s.vlans.Get(sn.Spec.Vlan)
	if apierrors.IsNotFound(err) {
		return vlanTag{}, &refusal{ReasonVlanNotFound, fmt.Errorf("spec.vlan: vlan %s not found: refused until it exists", sn.Spec.Vlan)}
	}
	if err != nil {
		return vlanTag{}, &refusal{ReasonVlanNotFound, fmt.Errorf("spec.vlan: get vlan %s: %w", sn.Spec.Vlan, err)}
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return vlanTag{}, &refusal{ReasonVlanInvalid, fmt.Errorf("spec.vlan: vlan %s is not an object", sn.Spec.Vlan)}
	}
	v, err := kubeovn.VlanFrom(u)
	if err != nil {
		return vlanTag{}, &refusal{ReasonVlanInvalid, fmt.Errorf("spec.vlan: %w", err)}
	}
	id, provider, err := v.Tag()
	if err != nil {
		return vlanTag{}, &refusal{ReasonVlanInvalid, fmt.Errorf("spec.vlan: %w", err)}
	}
	all := s.vlanInfos()
	if i := slices.IndexFunc(all, func(o vlanInfo) bool { return o.name == v.Name }); i >= 0 {
		if older := conflictOf(all, all[i]); older != "" {
			return vlanTag{}, &refusal{ReasonVlanConflict, fmt.Errorf("spec.vlan: vlan %s has id %d on provider %s, as vlan %s, which is older or in use: refused (its status.conflict is true)", v.Name, id, provider, older)}
		}
	}
	return vlanTag{id: id, provider: provider}, nil
}

// underlaySpec says whether the Subnet object names a Vlan.
func underlaySpec(u *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedString(u.Object, "spec", "vlan")
	return v != ""
}

// underlayReserved is what an underlay Subnet must not overlap: only the Service CIDRs (and
// the special ranges). It lives on the site's network, which the hosts' own networks and
// addresses may well be part of (put the hosts' addresses in excludeIps then).
func (s *Controller) underlayReserved() []subnetcheck.Reserved {
	return subnetcheck.Prefixes("Service CIDR", s.req.ServiceCIDRs...)
}

// ensureUnderlayRows gives the Subnet's switch its localnet port on the Vlan's provider with
// its tag; without logicalGateway the switch has no router port (the pods' gateway is the
// site's router at spec.gateway), with it the router port is kept as for an overlay subnet.
// With u2o addresses (u2oInterconnection, u2o.go) the router port is at them instead, with the
// u2o policies; without, those policies are removed.
func (s *Controller) ensureUnderlayRows(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network, tag vlanTag, u2o []netip.Addr) error {
	switch {
	case len(u2o) > 0:
		if err := s.ensureU2ORows(ctx, sn, net, u2o); err != nil {
			return err
		}
	case sn.Spec.LogicalGateway:
		if err := s.ensureRows(ctx, sn, s.routerOf(sn.Spec), net); err != nil {
			return err
		}
	}
	err := s.req.NB.EnsureLocalnet(ctx, northbound.LocalnetSpec{Switch: sn.Name, Router: s.routerOf(sn.Spec), CIDRs: net.CIDRs,
		Provider: tag.provider, Tag: tag.id, LogicalGateway: sn.Spec.LogicalGateway || len(u2o) > 0})
	if err != nil {
		return err
	}
	if len(u2o) == 0 {
		if err := s.removeU2ORows(ctx, sn.Name); err != nil {
			return err
		}
	}
	if s.req.Services {
		return s.req.NB.EnsureLoadBalancerGroup(ctx, northbound.LoadBalancerGroupSpec{Name: northbound.ClusterLoadBalancerGroup,
			Switches: []string{sn.Name}})
	}
	return nil
}
