package subnets

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/subnetacl"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// isolate makes the ACLs on the Subnet's switch those of its spec (package subnetacl): the
// isolation of spec.private and spec.allowSubnets, and spec.acls with allowEWTraffic; none
// when it asks for neither. They are owned by the Subnet, so they go with its switch; an
// unchanged Subnet costs no write. A write is announced with NB_Global's nb_cfg, as a policy
// change is, so the nodes purge their userspace datapath's flow cache and no cached flow
// outlives the change.
func (s *Controller) isolate(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network) error {
	spec, ref := s.switchACLs(sn, net)
	if ref != nil {
		return ref
	}
	wrote, err := s.req.NB.EnsureSwitchACLs(ctx, spec)
	if wrote {
		s.unannounced.Store(true)
		s.log.Info("subnet acls applied", "subnet", sn.Name, "private", sn.Spec.Private,
			"allowSubnets", fmt.Sprint(sn.Spec.AllowSubnets), "customAcls", len(sn.Spec.ACLs), "acls", len(spec.ACLs))
	}
	if err != nil {
		return err
	}
	return s.announce(ctx)
}

// switchACLs is the Subnet's ACLs as northbound writes them, or a refusal naming the field
// at fault: validate calls it too, so a bad entry is refused before anything is written.
func (s *Controller) switchACLs(sn *kubeovn.Subnet, net kubeovn.Network) (northbound.SwitchACLsSpec, *refusal) {
	allow, err := kubeovn.ParseAllowSubnets(sn.Spec)
	if err != nil {
		return northbound.SwitchACLsSpec{}, &refusal{ReasonInvalidSpec, err}
	}
	if err := subnetacl.CheckACLs(sn.Spec.ACLs); err != nil {
		return northbound.SwitchACLsSpec{}, &refusal{ReasonInvalidSpec, err}
	}
	rules := subnetacl.Build(subnetacl.Request{Subnet: sn.Name, Private: sn.Spec.Private, CIDRs: net.CIDRs, Allow: allow,
		Hosts: masked(s.req.JoinCIDRs), ACLs: sn.Spec.ACLs, AllowEWTraffic: sn.Spec.AllowEWTraffic})
	spec := northbound.SwitchACLsSpec{Switch: sn.Name, Owner: subnetacl.Owner(sn.Name), ACLs: rules}
	if err := spec.Validate(); err != nil {
		return spec, &refusal{ReasonInvalidSpec, fmt.Errorf("acls: %w", err)}
	}
	return spec, nil
}

// announce bumps nb_cfg when ACLs were written since the last bump, including by a call that
// failed after writing. Without an NB_Global row no ovn-northd has run: nothing to announce.
func (s *Controller) announce(ctx context.Context) error {
	if !s.unannounced.Load() {
		return nil
	}
	if err := s.req.NB.BumpNBCfg(ctx); err != nil && !errors.Is(err, ovn.ErrNotFound) {
		return err
	}
	s.unannounced.Store(false)
	return nil
}
