package northbound

import (
	"context"
	"fmt"
	"maps"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// SymmetricReplyOption is the static route option of OVN (and Kube-OVN's ecmpMode value)
// that sends the replies of a connection back over the route it came in by.
const SymmetricReplyOption = "ecmp_symmetric_reply"

// RouteTableOption is the router port option that binds the port to a route table: traffic
// entering the router there is routed by that table's routes and the main table's.
const RouteTableOption = "route_table"

// maxRouteTable bounds a route table's name (OVN takes any string; Kube-OVN any too).
const maxRouteTable = 63

// ValidateRouteTable refuses a route table name that is not 1-63 letters, digits, '-', '_'
// or '.' ("" is the main table).
func ValidateRouteTable(name string) error {
	if len(name) > maxRouteTable {
		return fmt.Errorf("%w: route table %q is longer than %d characters", ovn.ErrInvalid, name, maxRouteTable)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("%w: route table %q: only letters, digits, '-', '_' and '.'", ovn.ErrInvalid, name)
		}
	}
	return nil
}

func (s StaticRouteSpec) options() map[string]string {
	if !s.SymmetricReply {
		return nil
	}
	return map[string]string{SymmetricReplyOption: "true"}
}

// sameRoute: r is the row of s, as a Vpc's routes are identified (table, prefix, policy and
// next hop: the routes of one prefix with different next hops are an ECMP group).
func (s StaticRouteSpec) sameRoute(r *nbdb.LogicalRouterStaticRoute) bool {
	return r.RouteTable == s.RouteTable && r.IPPrefix == s.Prefix.String() &&
		effectivePolicy(r.Policy) == s.policy() && r.Nexthop == s.NextHop.String()
}

// ecmpRouteOps appends what makes the route right where a prefix may have several next hops:
// the row of the same table, prefix, policy and next hop is repaired (its symmetric-reply
// option and tags) or inserted; other next hops of the prefix are left to the caller.
func (c *Client) ecmpRouteOps(ctx context.Context, spec StaticRouteSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	lr, routes, err := c.routerRoutes(ctx, spec.Router)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		if !spec.sameRoute(r) {
			continue
		}
		if !ovn.IsOwned(r.ExternalIDs) {
			return nil, fmt.Errorf("static route %s via %s: %w", spec.Prefix, spec.NextHop, ovn.ErrNotOwned)
		}
		symmetric := r.Options[SymmetricReplyOption] == "true"
		if symmetric == spec.SymmetricReply && ovn.HasAll(r.ExternalIDs, spec.Owner.ids()) {
			return ops, nil
		}
		opts := maps.Clone(r.Options)
		if opts == nil {
			opts = map[string]string{}
		}
		delete(opts, SymmetricReplyOption)
		maps.Copy(opts, spec.options())
		m := &nbdb.LogicalRouterStaticRoute{UUID: r.UUID, Options: opts, ExternalIDs: merged(r.ExternalIDs, spec.Owner.ids())}
		upd, err := c.nb.Where(m).Update(m, &m.Options, &m.ExternalIDs)
		if err != nil {
			return nil, fmt.Errorf("build update of static route: %w", err)
		}
		return append(ops, upd...), nil
	}
	return c.insertRouteOps(ops, spec, lr)
}
