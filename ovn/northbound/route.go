package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// StaticRouteSpec is one static route of an edgeovn router. EnsureStaticRoute identifies it by
// (RouteTable, Prefix, SrcIP) and keeps one next hop there; a Vpc's routes (EnsureVpc) are
// identified by their next hop too, so several of one prefix form an ECMP group.
type StaticRouteSpec struct {
	Router  string
	Prefix  netip.Prefix // ip_prefix
	NextHop netip.Addr
	SrcIP   bool // policy src-ip (route by source address) instead of dst-ip
	// RouteTable is OVN's route_table: "" the main table (every port), else only for the
	// traffic entering the router through a port whose options:route_table names it.
	RouteTable string
	// SymmetricReply is options:ecmp_symmetric_reply: replies of a connection that came in
	// over this route go back through it, not through ECMP's choice (Kube-OVN's ecmpMode
	// "ecmp_symmetric_reply").
	SymmetricReply bool
	Owner          OwnerRef
}

// Validate reports what is wrong with the spec.
func (s StaticRouteSpec) Validate() error {
	if err := validateName("router", s.Router); err != nil {
		return err
	}
	what := fmt.Sprintf("static route %s", s.Prefix)
	if !s.Prefix.IsValid() || s.Prefix != s.Prefix.Masked() {
		return fmt.Errorf("%w: %s: prefix must be a network prefix", ovn.ErrInvalid, what)
	}
	if !s.NextHop.IsValid() || s.NextHop.Is4() != s.Prefix.Addr().Is4() {
		return fmt.Errorf("%w: %s: next hop %q missing or of the other family", ovn.ErrInvalid, what, s.NextHop)
	}
	if err := ValidateRouteTable(s.RouteTable); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return s.Owner.validate(what)
}

func (s StaticRouteSpec) policy() nbdb.LogicalRouterStaticRoutePolicy {
	if s.SrcIP {
		return nbdb.LogicalRouterStaticRoutePolicySrcIP
	}
	return nbdb.LogicalRouterStaticRoutePolicyDstIP
}

// EnsureStaticRoute creates the route on the router, or repairs its next hop and tags. A
// route with the same prefix and policy that edgeovn does not own is ovn.ErrNotOwned.
func (c *Client) EnsureStaticRoute(ctx context.Context, spec StaticRouteSpec) error {
	ops, err := c.staticRouteOps(ctx, spec, nil)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure static route %s via %s on %s: %w", spec.Prefix, spec.NextHop, spec.Router, err)
	}
	return nil
}

// staticRouteOps appends to ops what makes the route right.
func (c *Client) staticRouteOps(ctx context.Context, spec StaticRouteSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	lr, routes, err := c.routerRoutes(ctx, spec.Router)
	if err != nil {
		return nil, err
	}
	policy := spec.policy()
	for _, r := range routes {
		if r.IPPrefix != spec.Prefix.String() || effectivePolicy(r.Policy) != policy || r.RouteTable != spec.RouteTable {
			continue
		}
		if !ovn.IsOwned(r.ExternalIDs) {
			return nil, fmt.Errorf("static route %s: %w", spec.Prefix, ovn.ErrNotOwned)
		}
		if r.Nexthop == spec.NextHop.String() && ovn.HasAll(r.ExternalIDs, spec.Owner.ids()) {
			return ops, nil
		}
		m := &nbdb.LogicalRouterStaticRoute{UUID: r.UUID, Nexthop: spec.NextHop.String(),
			ExternalIDs: merged(r.ExternalIDs, spec.Owner.ids())}
		upd, err := c.nb.Where(m).Update(m, &m.Nexthop, &m.ExternalIDs)
		if err != nil {
			return nil, fmt.Errorf("build update of static route: %w", err)
		}
		return append(ops, upd...), nil
	}
	return c.insertRouteOps(ops, spec, lr)
}

// routerRoutes reads the owned router and its static routes.
func (c *Client) routerRoutes(ctx context.Context, router string) (*nbdb.LogicalRouter, []*nbdb.LogicalRouterStaticRoute, error) {
	lr, err := c.ownedRouter(ctx, router)
	if err != nil {
		return nil, nil, err
	}
	routes, err := byUUID(ctx, c, lr.StaticRoutes, func(u string) *nbdb.LogicalRouterStaticRoute {
		return &nbdb.LogicalRouterStaticRoute{UUID: u}
	})
	if err != nil {
		return nil, nil, err
	}
	return lr, routes, nil
}

// insertRouteOps appends the insert of the route's row into the router's static routes.
func (c *Client) insertRouteOps(ops []ovsdb.Operation, spec StaticRouteSpec, lr *nbdb.LogicalRouter) ([]ovsdb.Operation, error) {
	policy := spec.policy()
	row := &nbdb.LogicalRouterStaticRoute{
		UUID:        namedUUID("route", len(ops)),
		IPPrefix:    spec.Prefix.String(),
		Nexthop:     spec.NextHop.String(),
		Policy:      &policy,
		RouteTable:  spec.RouteTable,
		Options:     spec.options(),
		ExternalIDs: maps.Clone(spec.Owner.ids()),
	}
	return c.insertChild(ops, row, row.UUID, parentRef{nbdb.LogicalRouterTable, lr.UUID, lr.Name, "static_routes"})
}

// effectivePolicy is the policy of a route, where an empty column means dst-ip.
func effectivePolicy(p *nbdb.LogicalRouterStaticRoutePolicy) nbdb.LogicalRouterStaticRoutePolicy {
	if p == nil {
		return nbdb.LogicalRouterStaticRoutePolicyDstIP
	}
	return *p
}
