package ovnnat

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
)

// eipOwner is an EIP's owner in the IPAM.
func eipOwner(name string) ipam.Owner { return ipam.Owner{Pod: "ovn-eip:" + name, Interface: "eip"} }

func externalSubnetOf(e *kubeovn.OvnEip) string {
	if e.Spec.ExternalSubnet != "" {
		return e.Spec.ExternalSubnet
	}
	return kubeovn.ExternalSubnet
}

// Claims are the EIPs' addresses as their status records them: the IPAM reconcile at the
// start of a term keeps them (and releases the EIPs deleted while no controller ran).
func (c *Controller) Claims() []ipam.Allocation {
	objs, _ := c.lister("eip").List(labels.Everything())
	var out []ipam.Allocation
	for _, obj := range objs {
		var e kubeovn.OvnEip
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || kubeovn.FromObject(u, &e) != nil {
			continue
		}
		ip, err := netip.ParseAddr(e.Status.V4Ip)
		mac, merr := net.ParseMAC(e.Status.MacAddress)
		if err != nil || merr != nil {
			continue
		}
		out = append(out, ipam.Allocation{Subnet: externalSubnetOf(&e), Owner: eipOwner(e.Name), IPs: []netip.Addr{ip}, MAC: mac,
			Allocated: e.CreationTimestamp.Time})
	}
	return out
}

// syncEip allocates an OvnEip's address in its external Subnet (spec.v4Ip if set) and writes
// Kube-OVN's status; a deleted one waits until no FIP or SNAT rule names it, then its address
// is released.
func (c *Controller) syncEip(ctx context.Context, name string) error {
	u, err := c.get("eip", name)
	if err != nil {
		return err
	}
	if u == nil {
		return c.req.IPAM.Release(ctx, eipOwner(name))
	}
	var e kubeovn.OvnEip
	if err := kubeovn.FromObject(u, &e); err != nil {
		return err
	}
	users := c.eipUsers(name)
	if e.DeletionTimestamp != nil {
		if len(users) > 0 {
			return c.eipStatus(ctx, u, &e, users, ipam.Allocation{}, refuse(ReasonEipInUse,
				"deletion waits for the NAT objects that name it in spec.ovnEip: %v", users))
		}
		if err := c.req.IPAM.Release(ctx, eipOwner(name)); err != nil {
			return err
		}
		return c.setFinalizer(ctx, "eip", u, false)
	}
	if err := c.setFinalizer(ctx, "eip", u, true); err != nil {
		return err
	}
	a, ref := c.allocateEip(ctx, &e)
	return c.eipStatus(ctx, u, &e, users, a, ref)
}

// allocateEip validates the spec and allocates its address.
func (c *Controller) allocateEip(ctx context.Context, e *kubeovn.OvnEip) (ipam.Allocation, *refusal) {
	subnet := externalSubnetOf(e)
	cidrs, _, ref := c.externalSubnet(subnet, "spec.externalSubnet")
	if ref != nil {
		return ipam.Allocation{}, ref
	}
	switch e.Spec.Type {
	case "", kubeovn.EipTypeNat, kubeovn.EipTypeLrp:
	default:
		return ipam.Allocation{}, refuse(ReasonInvalidSpec, "spec.type %q: want %s or %s (%s is not served)", e.Spec.Type, kubeovn.EipTypeNat, kubeovn.EipTypeLrp, kubeovn.EipTypeLsp)
	}
	if e.Spec.V6Ip != "" {
		return ipam.Allocation{}, refuse(ReasonInvalidSpec, "spec.v6Ip %q: edgeovn's OVN NAT is IPv4 only", e.Spec.V6Ip)
	}
	req := ipam.Request{Subnet: subnet, Owner: eipOwner(e.Name)}
	if e.Spec.V4Ip != "" {
		ip, err := netip.ParseAddr(e.Spec.V4Ip)
		if err != nil || !ip.Is4() {
			return ipam.Allocation{}, refuse(ReasonInvalidSpec, "spec.v4Ip %q is not an IPv4 address", e.Spec.V4Ip)
		}
		if !slices.ContainsFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(ip) }) {
			return ipam.Allocation{}, refuse(ReasonAddressTaken, "spec.v4Ip %s is outside the external subnet %s %v", ip, subnet, cidrs)
		}
		if o, held := c.req.IPAM.Owner(subnet, ip); held && o != req.Owner {
			return ipam.Allocation{}, refuse(ReasonAddressTaken, "spec.v4Ip %s is already used by %s in subnet %s", ip, o.Pod, subnet)
		}
		req.IPs = []netip.Addr{ip}
	}
	if e.Spec.MacAddress != "" {
		mac, err := net.ParseMAC(e.Spec.MacAddress)
		if err != nil {
			return ipam.Allocation{}, refuse(ReasonInvalidSpec, "spec.macAddress %q: %v", e.Spec.MacAddress, err)
		}
		req.MAC = mac
	}
	a, err := c.req.IPAM.Allocate(ctx, req)
	if errors.Is(err, ipam.ErrUnknownSubnet) {
		return a, refuse(ReasonExternalNet, "spec.externalSubnet: subnet %s is not applied yet", subnet)
	}
	if err != nil {
		return a, refuse(ReasonAddressTaken, "spec.v4Ip %q in subnet %s: %v", e.Spec.V4Ip, subnet, err)
	}
	return a, nil
}

// externalSubnet returns a validated external Subnet's CIDRs and gateway, or a refusal naming
// field.
func (c *Controller) externalSubnet(name, field string) ([]netip.Prefix, netip.Addr, *refusal) {
	u, err := c.get("subnet", name)
	if err != nil || u == nil {
		return nil, netip.Addr{}, refuse(ReasonExternalNet, "%s: subnet %s not found", field, name)
	}
	sn, err := kubeovn.FromUnstructured(u)
	if err != nil || !sn.IsValidated() && !sn.IsReady() {
		return nil, netip.Addr{}, refuse(ReasonExternalNet, "%s: subnet %s is not validated", field, name)
	}
	cidrs, err := kubeovn.CIDRs(sn.Spec)
	if err != nil || !cidrs[0].Addr().Is4() {
		return nil, netip.Addr{}, refuse(ReasonExternalNet, "%s: subnet %s has no IPv4 cidrBlock", field, name)
	}
	gw, _, _ := strings.Cut(sn.Spec.Gateway, ",")
	gateway, err := netip.ParseAddr(gw)
	if err != nil {
		return nil, netip.Addr{}, refuse(ReasonExternalNet, "%s: subnet %s has no gateway", field, name)
	}
	return cidrs, gateway, nil
}

// eipUsers lists the FIPs, SNAT and DNAT rules naming the EIP ("fip/<name>", ...).
func (c *Controller) eipUsers(eip string) []string {
	var out []string
	for _, kind := range []string{"fip", "snat", "dnat"} {
		objs, _ := c.lister(kind).List(labels.Everything())
		for _, obj := range objs {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				if v, _, _ := unstructured.NestedString(u.Object, "spec", "ovnEip"); v == eip {
					out = append(out, kind+"/"+u.GetName())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// eipStatus writes Kube-OVN's status: type, v4Ip, macAddress, ready, nat (the kinds of NAT
// using it: fip, snat).
func (c *Controller) eipStatus(ctx context.Context, u *unstructured.Unstructured, e *kubeovn.OvnEip, users []string, a ipam.Allocation, ref *refusal) error {
	st := e.Status
	if ref == nil || ref.reason == ReasonEipInUse {
		if len(a.IPs) > 0 {
			st.V4Ip, st.MacAddress = a.IPs[0].String(), a.MAC.String()
		}
		st.Type = e.Spec.Type
		if st.Type == "" {
			st.Type = kubeovn.EipTypeNat
		}
		var nats []string
		for _, us := range users {
			k, _, _ := strings.Cut(us, "/")
			if !slices.Contains(nats, k) {
				nats = append(nats, k)
			}
		}
		st.Nat = strings.Join(nats, ",")
	}
	return finish(ctx, c, "eip", u, e.Status, st, ref)
}

// readyEip returns the ready EIP called name, or a refusal naming field.
func (c *Controller) readyEip(name, field string) (*kubeovn.OvnEip, *refusal) {
	if name == "" {
		return nil, refuse(ReasonInvalidSpec, "%s is required", field)
	}
	u, err := c.get("eip", name)
	if err != nil || u == nil {
		return nil, refuse(ReasonEipNotFound, "%s: ovn eip %s not found", field, name)
	}
	var e kubeovn.OvnEip
	if err := kubeovn.FromObject(u, &e); err != nil {
		return nil, refuse(ReasonEipNotFound, "%s: %v", field, err)
	}
	switch {
	case e.Status.Type == kubeovn.EipTypeLrp || e.Spec.Type == kubeovn.EipTypeLrp:
		return nil, refuse(ReasonEipInUse, "%s: ovn eip %s is a router port's address (type lrp): NAT cannot use it", field, name)
	case !e.Status.Ready || e.Status.V4Ip == "" || e.DeletionTimestamp != nil:
		return nil, refuse(ReasonEipNotFound, "%s: ovn eip %s is not ready", field, name)
	}
	return &e, nil
}
