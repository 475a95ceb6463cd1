package vpcs

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/ovnmatch"
)

// Reasons in a Vpc's conditions and Events.
const (
	ReasonReady        = "VpcReady"
	ReasonInvalidSpec  = "InvalidSpec"
	ReasonNextHop      = "NextHopOutsideVpc"
	ReasonBadMatch     = "InvalidMatch"
	ReasonInUse        = "VpcInUse"
	ReasonPeerNotFound = "VpcPeerNotFound"
	ReasonApplyError   = "ApplyFailed"
)

// refusal is a Vpc spec edgeovn will not apply as it stands: reported in its status, not
// retried until it changes; what was applied before stays.
type refusal struct {
	reason string
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }

// vpcSubnet is a validated Subnet of a VPC.
type vpcSubnet struct {
	name  string
	cidrs []netip.Prefix
}

// sync brings one Vpc's router, routes and policies to its spec, or holds its deletion until
// no Subnet names it, then removes its rows.
func (c *Controller) sync(ctx context.Context, name string) error {
	obj, err := c.vpcs.Get(name)
	if apierrors.IsNotFound(err) {
		return c.gone(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("get vpc %s: %w", name, err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	subnets := c.subnetsOf(name)
	v, err := kubeovn.VpcFrom(u)
	if err != nil {
		return c.writeStatus(ctx, u, kubeovn.UnreadVpc(u), subnets, &refusal{ReasonInvalidSpec, err})
	}
	if v.DeletionTimestamp != nil {
		return c.deleting(ctx, u, v, subnets)
	}
	if err := c.writer().SetFinalizer(ctx, u, true); err != nil {
		return err
	}
	if name == kubeovn.DefaultVpc {
		return c.writeStatus(ctx, u, v, subnets, nil) // the cluster router is the core's
	}
	spec, ref := c.validate(v, subnets)
	if ref == nil {
		if err := c.req.NB.EnsureVpc(ctx, spec); err != nil {
			_ = c.writeStatus(ctx, u, v, subnets, &refusal{ReasonApplyError, err})
			return err
		}
	}
	return c.writeStatus(ctx, u, v, subnets, ref)
}

// validate parses the Vpc's static and policy routes: each field as Kube-OVN defines it, each
// match as OVN would parse it (package ovnmatch: a match northd cannot parse would leave the
// router without the rule), each next hop inside a validated Subnet of this VPC.
func (c *Controller) validate(v *kubeovn.Vpc, subnets []vpcSubnet) (northbound.VpcSpec, *refusal) {
	spec := northbound.VpcSpec{Name: v.Name}
	for i, p := range v.Spec.VpcPeerings {
		local, err := kubeovn.ParsePeering(i, v.Name, p)
		if err != nil {
			return spec, &refusal{ReasonInvalidSpec, err}
		}
		if _, err := c.vpcs.Get(p.RemoteVpc); err != nil {
			return spec, &refusal{ReasonPeerNotFound, fmt.Errorf("vpcPeerings[%d].remoteVpc: vpc %s not found: refused until it exists", i, p.RemoteVpc)}
		}
		spec.Peerings = append(spec.Peerings, northbound.PeeringSpec{Remote: p.RemoteVpc, Local: local})
		// A route's next hop may be the peer's end of the link.
		subnets = append(subnets, vpcSubnet{name: "vpcPeerings[" + fmt.Sprint(i) + "]", cidrs: []netip.Prefix{local.Masked()}})
	}
	routes, ref := staticRoutes(v, subnets)
	if ref != nil {
		return spec, ref
	}
	spec.Routes = routes
	for i, r := range v.Spec.PolicyRoutes {
		p, err := kubeovn.ParsePolicyRoute(i, r)
		if err != nil {
			return spec, &refusal{ReasonInvalidSpec, err}
		}
		if err := ovnmatch.Check(p.Match); err != nil {
			return spec, &refusal{ReasonBadMatch, fmt.Errorf("policyRoutes[%d].match: %w", i, err)}
		}
		ps := northbound.RouterPolicySpec{Priority: p.Priority, Match: p.Match, Action: nbdb.LogicalRouterPolicyAction(p.Action)}
		if p.NextHop.IsValid() {
			if ref := nextHopInside(fmt.Sprintf("policyRoutes[%d].nextHopIP", i), p.NextHop, v.Name, subnets); ref != nil {
				return spec, ref
			}
			ps.NextHops = []netip.Addr{p.NextHop}
		}
		spec.Policies = append(spec.Policies, ps)
	}
	return spec, nil
}

// staticRoutes parses the Vpc's static routes. The routes of one route table, policy and cidr
// are an ECMP group (one route per next hop, as Kube-OVN writes them): a next hop twice in a
// group, or a group whose routes disagree on ecmp_symmetric_reply, is refused naming the
// route that breaks it.
func staticRoutes(v *kubeovn.Vpc, subnets []vpcSubnet) ([]northbound.StaticRouteSpec, *refusal) {
	var out []northbound.StaticRouteSpec
	for i, r := range v.Spec.StaticRoutes {
		route, err := kubeovn.ParseStaticRoute(i, r)
		if err != nil {
			return nil, &refusal{ReasonInvalidSpec, err}
		}
		if ref := nextHopInside(fmt.Sprintf("staticRoutes[%d].nextHopIP", i), route.NextHop, v.Name, subnets); ref != nil {
			return nil, ref
		}
		for j, o := range out {
			if o.RouteTable != route.RouteTable || o.Prefix != route.Prefix || o.SrcIP != route.SrcIP {
				continue
			}
			if o.NextHop == route.NextHop {
				return nil, &refusal{ReasonInvalidSpec, fmt.Errorf("%w: staticRoutes[%d].nextHopIP %s: staticRoutes[%d] has the same cidr %s, policy and routeTable through it", kubeovn.ErrInvalidVpc, i, route.NextHop, j, route.Prefix)}
			}
			if o.SymmetricReply != route.SymmetricReply {
				return nil, &refusal{ReasonInvalidSpec, fmt.Errorf("%w: staticRoutes[%d].ecmpMode %q differs from staticRoutes[%d]'s (%q), an ECMP group of the same cidr %s: give them one mode", kubeovn.ErrInvalidVpc, i, r.ECMPMode, j, v.Spec.StaticRoutes[j].ECMPMode, route.Prefix)}
			}
		}
		out = append(out, northbound.StaticRouteSpec{Prefix: route.Prefix, NextHop: route.NextHop, SrcIP: route.SrcIP,
			RouteTable: route.RouteTable, SymmetricReply: route.SymmetricReply})
	}
	return out, nil
}

// nextHopInside refuses a next hop outside every validated Subnet of the VPC: the router
// could not resolve it.
func nextHopInside(field string, hop netip.Addr, vpc string, subnets []vpcSubnet) *refusal {
	for _, sn := range subnets {
		if slices.ContainsFunc(sn.cidrs, func(p netip.Prefix) bool { return p.Contains(hop) }) {
			return nil
		}
	}
	names := make([]string, len(subnets))
	for i, sn := range subnets {
		names[i] = fmt.Sprintf("%s %v", sn.name, sn.cidrs)
	}
	return &refusal{ReasonNextHop, fmt.Errorf("%s %s is outside every subnet of vpc %s (%v): refused, the router could not reach it", field, hop, vpc, names)}
}

// subnetsOf lists the validated Subnets whose spec.vpc names the VPC (for DefaultVpc, those
// that name none), by name.
func (c *Controller) subnetsOf(vpc string) []vpcSubnet {
	objs, err := c.subnets.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []vpcSubnet
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		sn, err := kubeovn.FromUnstructured(u)
		if err != nil || kubeovn.VpcOf(sn.Spec) != vpc || !sn.IsValidated() && !sn.IsReady() {
			continue
		}
		cidrs, err := kubeovn.CIDRs(sn.Spec)
		if err != nil {
			continue
		}
		out = append(out, vpcSubnet{name: sn.Name, cidrs: cidrs})
	}
	slices.SortFunc(out, func(a, b vpcSubnet) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	return out
}

// deleting holds a deleted Vpc while Subnets name it (as Kube-OVN does); once none does, its
// router, routes and policies go and the finalizer is removed.
func (c *Controller) deleting(ctx context.Context, u *unstructured.Unstructured, v *kubeovn.Vpc, subnets []vpcSubnet) error {
	if named := c.namingSubnets(v.Name); len(named) > 0 && v.Name != kubeovn.DefaultVpc {
		return c.writeStatus(ctx, u, v, subnets, &refusal{ReasonInUse,
			fmt.Errorf("deletion waits for the subnets that name it in spec.vpc: %v (delete them first)", named)})
	}
	if v.Name != kubeovn.DefaultVpc {
		if err := c.gone(ctx, v.Name); err != nil {
			return err
		}
	}
	return c.writer().SetFinalizer(ctx, u, false)
}

// namingSubnets lists every Subnet (validated or not) whose spec.vpc is vpc.
func (c *Controller) namingSubnets(vpc string) []string {
	objs, err := c.subnets.List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []string
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if s, _, _ := unstructured.NestedString(u.Object, "spec", "vpc"); s == vpc {
				out = append(out, u.GetName())
			}
		}
	}
	slices.Sort(out)
	return out
}

func (c *Controller) event(u *unstructured.Unstructured, reason, msg string) {
	if c.req.Events != nil {
		c.req.Events.Event(u, corev1.EventTypeWarning, reason, msg)
	}
}
