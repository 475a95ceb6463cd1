package northbound

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// VpcSpec is a custom VPC's logical router (named as the Vpc) with the static routes and
// policies its Vpc asks for; every row is owned by the Vpc (kind Vpc). The Routes' and
// Policies' Router and Owner are set by EnsureVpc. Routes are identified by route table,
// prefix, policy and next hop: those of one prefix with different next hops are an ECMP
// group (OVN balances over them per flow).
type VpcSpec struct {
	Name     string
	Routes   []StaticRouteSpec
	Policies []RouterPolicySpec
	Peerings []PeeringSpec
}

func (s VpcSpec) owner() OwnerRef { return OwnerRef{Kind: ovn.KindVpc, Name: s.Name} }

// EnsureVpcRouter creates the Vpc's router when missing (a Subnet of the Vpc may be applied
// before its Vpc: both create the same row). A router of that name that edgeovn does not own
// is ovn.ErrNotOwned.
func (c *Client) EnsureVpcRouter(ctx context.Context, name string) error {
	if err := validateName("router", name); err != nil {
		return fmt.Errorf("ensure vpc router: %w", err)
	}
	lr, err := c.routerByName(ctx, name)
	switch {
	case err != nil:
		return fmt.Errorf("ensure vpc router %s: %w", name, err)
	case lr != nil && !ovn.IsOwned(lr.ExternalIDs):
		return fmt.Errorf("ensure vpc router %s: %w", name, ovn.ErrNotOwned)
	case lr != nil:
		return nil
	}
	ops, err := c.nb.Create(&nbdb.LogicalRouter{UUID: "new_router", Name: name, ExternalIDs: ovn.OwnedBy(ovn.KindVpc, name)})
	if err != nil {
		return fmt.Errorf("build logical router %s: %w", name, err)
	}
	ops = append([]ovsdb.Operation{ovn.WaitAbsent(nbdb.LogicalRouterTable, "name", name)}, ops...)
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("ensure vpc router %s: %w", name, err)
	}
	return nil
}

// EnsureVpc makes the Vpc's router carry exactly its routes and policies: the missing ones
// are added, changed ones repaired, and those the Vpc owns but no longer asks for removed, in
// one transaction (after the router's own, when it is new). Every spec is validated before
// anything is written; if all is right, nothing is.
func (c *Client) EnsureVpc(ctx context.Context, spec VpcSpec) error {
	owner := spec.owner()
	for i := range spec.Routes {
		spec.Routes[i].Router, spec.Routes[i].Owner = spec.Name, owner
		if err := spec.Routes[i].Validate(); err != nil {
			return fmt.Errorf("ensure vpc %s: %w", spec.Name, err)
		}
		for _, o := range spec.Routes[:i] {
			if o.RouteTable == spec.Routes[i].RouteTable && o.Prefix == spec.Routes[i].Prefix && o.SrcIP == spec.Routes[i].SrcIP && o.NextHop == spec.Routes[i].NextHop {
				return fmt.Errorf("ensure vpc %s: %w: static route %s via %s twice", spec.Name, ovn.ErrInvalid, o.Prefix, o.NextHop)
			}
		}
	}
	for i := range spec.Policies {
		spec.Policies[i].Router, spec.Policies[i].Owner = spec.Name, owner
		if err := spec.Policies[i].Validate(); err != nil {
			return fmt.Errorf("ensure vpc %s: %w", spec.Name, err)
		}
	}
	if err := c.EnsureVpcRouter(ctx, spec.Name); err != nil {
		return err
	}
	ops, err := c.vpcOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure vpc %s: %w", spec.Name, err)
	}
	return nil
}

func (c *Client) vpcOps(ctx context.Context, spec VpcSpec) ([]ovsdb.Operation, error) {
	var ops []ovsdb.Operation
	var err error
	for _, r := range spec.Routes {
		if ops, err = c.ecmpRouteOps(ctx, r, ops); err != nil {
			return nil, err
		}
	}
	for _, p := range spec.Policies {
		if ops, err = c.routerPolicyOps(ctx, p, ops); err != nil {
			return nil, err
		}
	}
	if ops, err = c.peeringOps(ctx, spec, ops); err != nil {
		return nil, err
	}
	stale, err := c.staleVpcRows(ctx, spec)
	if err != nil {
		return nil, err
	}
	return append(ops, stale...), nil
}

// staleVpcRows are the deletions of the routes and policies the Vpc owns on its router that
// spec does not ask for.
func (c *Client) staleVpcRows(ctx context.Context, spec VpcSpec) ([]ovsdb.Operation, error) {
	lr, err := c.ownedRouter(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	ids := spec.owner().ids()
	routes, err := byUUID(ctx, c, lr.StaticRoutes, func(u string) *nbdb.LogicalRouterStaticRoute {
		return &nbdb.LogicalRouterStaticRoute{UUID: u}
	})
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	for _, r := range routes {
		if !ovn.HasAll(r.ExternalIDs, ids) || wantsRoute(spec.Routes, r) {
			continue
		}
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "static_routes", ovsdb.MutateOperationDelete, r.UUID),
			ovn.DeleteRow(nbdb.LogicalRouterStaticRouteTable, r.UUID))
	}
	policies, err := byUUID(ctx, c, lr.Policies, func(u string) *nbdb.LogicalRouterPolicy {
		return &nbdb.LogicalRouterPolicy{UUID: u}
	})
	if err != nil {
		return nil, err
	}
	for _, p := range policies {
		if !ovn.HasAll(p.ExternalIDs, ids) || wantsPolicy(spec.Policies, p) {
			continue
		}
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "policies", ovsdb.MutateOperationDelete, p.UUID),
			ovn.DeleteRow(nbdb.LogicalRouterPolicyTable, p.UUID))
	}
	return ops, nil
}

func wantsRoute(specs []StaticRouteSpec, r *nbdb.LogicalRouterStaticRoute) bool {
	for _, s := range specs {
		if s.sameRoute(r) {
			return true
		}
	}
	return false
}

func wantsPolicy(specs []RouterPolicySpec, p *nbdb.LogicalRouterPolicy) bool {
	for _, s := range specs {
		if s.Priority == p.Priority && s.Match == p.Match {
			return true
		}
	}
	return false
}

// VpcRouters lists the names of the routers a Vpc owns (kind Vpc), for the clean-up of Vpcs
// deleted while no controller ran.
func (c *Client) VpcRouters(ctx context.Context) ([]string, error) {
	var routers []*nbdb.LogicalRouter
	if err := c.nb.List(ctx, &routers); err != nil {
		return nil, fmt.Errorf("list routers from cache: %w", err)
	}
	var out []string
	for _, lr := range routers {
		if ovn.IsOwned(lr.ExternalIDs) && lr.ExternalIDs[ovn.OwnerKindKey] == ovn.KindVpc {
			out = append(out, lr.ExternalIDs[ovn.OwnerKey])
		}
	}
	return out, nil
}
