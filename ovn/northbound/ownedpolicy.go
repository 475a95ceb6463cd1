package northbound

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// EnsureOwnedPolicies makes the owner's policies at priority on router exactly specs (each of
// that router, priority and owner), in one transaction, and reports whether it wrote: missing
// ones inserted, differing ones repaired, the owner's others at that priority removed (none
// wanted removes them all). Policies of other owners or priorities are never touched.
func (c *Client) EnsureOwnedPolicies(ctx context.Context, router string, owner OwnerRef, priority int, specs []RouterPolicySpec) (bool, error) {
	ops, err := c.ownedPolicyOps(ctx, router, owner, priority, specs)
	if err == nil && len(ops) > 0 {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return false, fmt.Errorf("ensure router policies %d of %s %s on %s: %w", priority, owner.Kind, owner.Name, router, err)
	}
	return len(ops) > 0, nil
}

func (c *Client) ownedPolicyOps(ctx context.Context, router string, owner OwnerRef, priority int, specs []RouterPolicySpec) ([]ovsdb.Operation, error) {
	lr, err := c.ownedRouter(ctx, router)
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	wanted := map[string]bool{}
	for _, s := range specs {
		if s.Router != router || s.Owner != owner || s.Priority != priority {
			return nil, fmt.Errorf("%w: policy %q is not of router %s, owner %s %s, priority %d", ovn.ErrInvalid, s.Match, router, owner.Kind, owner.Name, priority)
		}
		wanted[s.Match] = true
		if ops, err = c.routerPolicyOps(ctx, s, ops); err != nil {
			return nil, err
		}
	}
	policies, err := byUUID(ctx, c, lr.Policies, func(u string) *nbdb.LogicalRouterPolicy { return &nbdb.LogicalRouterPolicy{UUID: u} })
	if err != nil {
		return nil, err
	}
	var drop []string
	for _, p := range policies {
		if p.Priority == priority && isOwner(p.ExternalIDs, owner) && !wanted[p.Match] {
			drop = append(drop, p.UUID)
		}
	}
	if len(drop) > 0 {
		slices.Sort(drop)
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "policies", ovsdb.MutateOperationDelete, drop...))
	}
	return ops, nil
}
