package ovnnat

import (
	"context"
	"net/netip"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// syncSnat writes an OvnSnatRule's snat row on its VPC's router, as Kube-OVN's
// handleAddOvnSnatRule: external_ip the EIP, logical_ip the vpcSubnet's CIDR, the pod's
// address (ipName) or v4IpCidr (with vpc). A deleted rule loses exactly its row.
func (c *Controller) syncSnat(ctx context.Context, name string) error {
	owner := northbound.OwnerRef{Kind: ovn.KindOvnSnatRule, Name: name}
	u, r, err := liveAs[kubeovn.OvnSnatRule](ctx, c, "snat", name, c.ownedRows(owner))
	if r == nil {
		return err
	}
	eip, ref := c.readyEip(r.Spec.OvnEip, "spec.ovnEip")
	var in internal
	if ref == nil {
		in, ref = c.snatInternal(ctx, r)
	}
	ref = applyIf(ref, func() error {
		ext, _ := netip.ParseAddr(eip.Status.V4Ip)
		return c.req.NB.EnsureNAT(ctx, northbound.NATSpec{Router: in.vpc, Type: nbdb.NATTypeSNAT, ExternalIP: ext, LogicalIP: in.ip, Owner: owner})
	})
	st := r.Status
	if ref == nil {
		st.Vpc, st.V4Eip, st.V4IpCidr = in.vpc, eip.Status.V4Ip, in.ip.String()
		if in.ip.IsSingleIP() {
			st.V4IpCidr = in.ip.Addr().String()
		}
	}
	return finish(ctx, c, "snat", u, r.Status, st, ref)
}

// snatInternal resolves vpcSubnet (its first CIDR and its VPC), ipName or v4IpCidr.
func (c *Controller) snatInternal(ctx context.Context, r *kubeovn.OvnSnatRule) (internal, *refusal) {
	if r.Spec.VpcSubnet == "" {
		return c.internalOf(ctx, r.Spec.IPName, r.Spec.V4IpCidr, r.Spec.Vpc, false)
	}
	u, _ := c.get("subnet", r.Spec.VpcSubnet)
	if u == nil {
		return internal{}, refuse(ReasonIPNotFound, "spec.vpcSubnet: subnet %s not found", r.Spec.VpcSubnet)
	}
	sn, err := kubeovn.FromUnstructured(u)
	if err != nil {
		return internal{}, refuse(ReasonIPNotFound, "spec.vpcSubnet: %v", err)
	}
	cidrs, err := kubeovn.CIDRs(sn.Spec)
	if err != nil || !cidrs[0].Addr().Is4() {
		return internal{}, refuse(ReasonIPNotFound, "spec.vpcSubnet: subnet %s has no IPv4 cidrBlock", r.Spec.VpcSubnet)
	}
	vpc := kubeovn.VpcOf(sn.Spec)
	if r.Spec.Vpc != "" && r.Spec.Vpc != vpc {
		return internal{}, refuse(ReasonVpcMismatch, "spec.vpcSubnet: subnet %s is in vpc %s, not in spec.vpc %s", r.Spec.VpcSubnet, vpc, r.Spec.Vpc)
	}
	if !c.linked(vpc) {
		return internal{}, refuse(ReasonNoExternal, "spec.vpcSubnet: vpc %s is not linked to the external network (spec.enableExternal)", vpc)
	}
	return internal{ip: cidrs[0].Masked(), vpc: vpc}, nil
}
