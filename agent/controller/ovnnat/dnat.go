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

// syncDnat writes an OvnDnatRule's load balancer on its VPC's router, as Kube-OVN's AddDnatRule:
// named as the rule, "<eip>:<externalPort>" to "<ip>:<internalPort>" (protocol tcp by
// default). A deleted rule loses exactly its load balancer.
func (c *Controller) syncDnat(ctx context.Context, name string) error {
	owner := northbound.OwnerRef{Kind: ovn.KindOvnDnatRule, Name: name}
	u, r, err := liveAs[kubeovn.OvnDnatRule](ctx, c, "dnat", name, func(ctx context.Context) error {
		_, err := c.req.NB.DeleteDNAT(ctx, owner)
		return err
	})
	if r == nil {
		return err
	}
	spec, in, eip, ref := c.dnatSpec(ctx, r)
	ref = applyIf(ref, func() error { spec.Owner = owner; return c.req.NB.EnsureDNAT(ctx, spec) })
	st := r.Status
	if ref == nil {
		st.Vpc, st.V4Eip, st.V4Ip, st.IPName = in.vpc, eip.Status.V4Ip, in.ip.Addr().String(), r.Spec.IPName
		st.ExternalPort, st.InternalPort, st.Protocol = r.Spec.ExternalPort, r.Spec.InternalPort, string(spec.Protocol)
	}
	return finish(ctx, c, "dnat", u, r.Status, st, ref)
}

// dnatSpec validates the rule: its EIP, its ports (1-65535), its protocol (tcp, udp), its
// internal address as for a FIP, and no older rule on the same EIP, protocol and port.
func (c *Controller) dnatSpec(ctx context.Context, r *kubeovn.OvnDnatRule) (northbound.DNATSpec, internal, *kubeovn.OvnEip, *refusal) {
	var spec northbound.DNATSpec
	eip, ref := c.readyEip(r.Spec.OvnEip, "spec.ovnEip")
	if ref != nil {
		return spec, internal{}, nil, ref
	}
	proto := nbdb.LoadBalancerProtocol(r.Spec.Protocol)
	if proto == "" {
		proto = nbdb.LoadBalancerProtocolTCP
	}
	if proto != nbdb.LoadBalancerProtocolTCP && proto != nbdb.LoadBalancerProtocolUDP {
		return spec, internal{}, nil, refuse(ReasonInvalidSpec, "spec.protocol %q: want tcp or udp", r.Spec.Protocol)
	}
	ext, err1 := strconv.ParseUint(r.Spec.ExternalPort, 10, 16)
	inp, err2 := strconv.ParseUint(r.Spec.InternalPort, 10, 16)
	switch {
	case err1 != nil || ext == 0:
		return spec, internal{}, nil, refuse(ReasonInvalidSpec, "spec.externalPort %q: want a port 1-65535", r.Spec.ExternalPort)
	case err2 != nil || inp == 0:
		return spec, internal{}, nil, refuse(ReasonInvalidSpec, "spec.internalPort %q: want a port 1-65535", r.Spec.InternalPort)
	}
	if other := c.olderDnat(r, string(proto)); other != "" {
		return spec, internal{}, nil, refuse(ReasonEipInUse, "spec.externalPort: %s port %s of ovn eip %s is already used by ovn dnat rule %s", proto, r.Spec.ExternalPort, r.Spec.OvnEip, other)
	}
	in, ref := c.internalOf(ctx, r.Spec.IPName, r.Spec.V4Ip, r.Spec.Vpc, true)
	if ref != nil {
		return spec, in, nil, ref
	}
	vip, _ := netip.ParseAddr(eip.Status.V4Ip)
	spec = northbound.DNATSpec{Router: in.vpc, Name: r.Name, Protocol: proto, VIP: netip.AddrPortFrom(vip, uint16(ext)),
		Backend: netip.AddrPortFrom(in.ip.Addr(), uint16(inp))}
	return spec, in, eip, nil
}

// olderDnat is another rule on the same EIP, protocol and external port created before this
// one (ties: the smaller name), which keeps it.
func (c *Controller) olderDnat(r *kubeovn.OvnDnatRule, proto string) string {
	objs, _ := c.lister("dnat").List(labels.Everything())
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetName() == r.Name {
			continue
		}
		var o kubeovn.OvnDnatRule
		if kubeovn.FromObject(u, &o) != nil || o.Spec.OvnEip != r.Spec.OvnEip || o.Spec.ExternalPort != r.Spec.ExternalPort {
			continue
		}
		if p := o.Spec.Protocol; (p == "" && proto == "tcp" || p == proto) && (o.CreationTimestamp.Before(&r.CreationTimestamp) ||
			o.CreationTimestamp.Equal(&r.CreationTimestamp) && o.Name < r.Name) {
			return o.Name
		}
	}
	return ""
}
