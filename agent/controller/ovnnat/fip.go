package ovnnat

import (
	"context"
	"net/netip"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// internal is the address a FIP or SNAT rule maps, with its VPC and (for a pod) its port.
type internal struct {
	ip   netip.Prefix
	vpc  string
	port string // the pod port (ipName), "" for an address given as v4Ip
	mac  string
}

// syncFip writes an OvnFip's dnat_and_snat row on its VPC's router, as Kube-OVN's
// handleAddOvnFip: external_ip the EIP, logical_ip the pod's (ipName) or v4Ip, and for a pod
// logical_port and external_mac (the pod's MAC), options stateless=true for type
// distributed. A deleted FIP loses exactly its row.
func (c *Controller) syncFip(ctx context.Context, name string) error {
	owner := northbound.OwnerRef{Kind: ovn.KindOvnFip, Name: name}
	u, f, err := liveAs[kubeovn.OvnFip](ctx, c, "fip", name, c.ownedRows(owner))
	if f == nil {
		return err
	}
	spec, in, eip, ref := c.fipSpec(ctx, f)
	ref = applyIf(ref, func() error { spec.Owner = owner; return c.req.NB.EnsureNAT(ctx, spec) })
	st := f.Status
	if ref == nil {
		st.Vpc, st.V4Eip, st.V4Ip, st.MacAddress = in.vpc, eip.Status.V4Ip, in.ip.Addr().String(), eip.Status.MacAddress
	}
	return finish(ctx, c, "fip", u, f.Status, st, ref)
}

// fipSpec validates the FIP: its EIP exists, is ready and is no other FIP's; its internal
// address is a pod port (ipName) of the VPC spec.vpc names, or v4Ip with spec.vpc; that VPC
// is linked to the external network.
func (c *Controller) fipSpec(ctx context.Context, f *kubeovn.OvnFip) (northbound.NATSpec, internal, *kubeovn.OvnEip, *refusal) {
	var spec northbound.NATSpec
	eip, ref := c.readyEip(f.Spec.OvnEip, "spec.ovnEip")
	if ref != nil {
		return spec, internal{}, nil, ref
	}
	if other := c.olderFip(f); other != "" {
		return spec, internal{}, nil, refuse(ReasonEipInUse, "spec.ovnEip: ovn eip %s is already used by ovn fip %s", f.Spec.OvnEip, other)
	}
	in, ref := c.internalOf(ctx, f.Spec.IPName, f.Spec.V4Ip, f.Spec.Vpc, true)
	if ref != nil {
		return spec, in, nil, ref
	}
	switch f.Spec.Type {
	case "", kubeovn.GWCentralized, kubeovn.GWDistributed:
	default:
		return spec, in, nil, refuse(ReasonInvalidSpec, "spec.type %q: want %s or %s", f.Spec.Type, kubeovn.GWDistributed, kubeovn.GWCentralized)
	}
	typ := f.Spec.Type
	if typ == "" {
		cfg, _ := c.gatewayConfig(ctx)
		typ = cfg.fipType
	}
	ext, _ := netip.ParseAddr(eip.Status.V4Ip)
	spec = northbound.NATSpec{Router: in.vpc, Type: nbdb.NATTypeDNATAndSNAT, ExternalIP: ext, LogicalIP: in.ip,
		LogicalPort: in.port, ExternalMAC: in.mac, Options: map[string]string{"stateless": strconv.FormatBool(typ == kubeovn.GWDistributed)}}
	return spec, in, eip, nil
}

// olderFip is the name of another FIP on the same EIP created before this one (ties: the
// smaller name), which keeps it.
func (c *Controller) olderFip(f *kubeovn.OvnFip) string {
	objs, _ := c.lister("fip").List(labels.Everything())
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetName() == f.Name {
			continue
		}
		if v, _, _ := unstructured.NestedString(u.Object, "spec", "ovnEip"); v != f.Spec.OvnEip {
			continue
		}
		t := u.GetCreationTimestamp()
		if t.Before(&f.CreationTimestamp) || t.Equal(&f.CreationTimestamp) && u.GetName() < f.Name {
			return u.GetName()
		}
	}
	return ""
}

// internalOf resolves ipName (a pod port "<pod>.<namespace>", Kube-OVN's IP object name for a
// pod) or v4Ip (an address, or for SNAT a CIDR) with vpc; the VPC must be linked to the
// external network. single: one address only.
func (c *Controller) internalOf(ctx context.Context, ipName, v4, vpc string, single bool) (internal, *refusal) {
	var in internal
	switch {
	case ipName != "":
		p, ok, err := c.req.NB.PodPort(ctx, ipName)
		if err != nil || !ok || len(p.IPs) == 0 || !p.IPs[0].Is4() {
			return in, refuse(ReasonIPNotFound, "spec.ipName: no pod port %s with an IPv4 address (want \"<pod>.<namespace>\")", ipName)
		}
		in = internal{ip: netip.PrefixFrom(p.IPs[0], 32), vpc: c.vpcOfSubnet(p.Switch), port: p.Name, mac: p.MAC.String()}
		if vpc != "" && vpc != in.vpc {
			return in, refuse(ReasonVpcMismatch, "spec.ipName: pod port %s is in vpc %s (subnet %s), not in spec.vpc %s", ipName, in.vpc, p.Switch, vpc)
		}
	case v4 != "":
		pfx, err := netip.ParsePrefix(v4)
		if err != nil {
			a, aerr := netip.ParseAddr(v4)
			pfx, err = netip.PrefixFrom(a, 32), aerr
		}
		if err != nil || !pfx.Addr().Is4() || single && !pfx.IsSingleIP() {
			return in, refuse(ReasonInvalidSpec, "spec.v4Ip %q is not an IPv4 address", v4)
		}
		if vpc == "" {
			return in, refuse(ReasonInvalidSpec, "spec.vpc is required with spec.v4Ip")
		}
		in = internal{ip: pfx.Masked(), vpc: vpc}
	default:
		return in, refuse(ReasonInvalidSpec, "spec.ipName or spec.v4Ip is required")
	}
	if !c.linked(in.vpc) {
		return in, refuse(ReasonNoExternal, "spec.vpc: vpc %s is not linked to the external network (spec.enableExternal, status.enableExternal)", in.vpc)
	}
	return in, nil
}

// vpcOfSubnet is the VPC of the Subnet (switch) called name.
func (c *Controller) vpcOfSubnet(name string) string {
	u, _ := c.get("subnet", name)
	if u == nil {
		return ""
	}
	sn, err := kubeovn.FromUnstructured(u)
	if err != nil {
		return ""
	}
	return kubeovn.VpcOf(sn.Spec)
}

// linked says whether the Vpc's external link is applied (its status.enableExternal).
func (c *Controller) linked(vpc string) bool {
	u, _ := c.get("vpc", vpc)
	if u == nil {
		return false
	}
	on, _, _ := unstructured.NestedBool(u.Object, "status", "enableExternal")
	return on
}
