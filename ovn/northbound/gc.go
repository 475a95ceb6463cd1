package northbound

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// GCBatch is the number of rows a clean-up deletes per transaction, so that a large one does
// not hold the database in one huge transaction.
const GCBatch = 200

// keeper decides, from a row's external_ids, whether a clean-up keeps it.
type keeper interface {
	keeps(ids map[string]string) bool
}

// allBut keeps every row except those of one owner.
type allBut OwnerRef

func (a allBut) keeps(ids map[string]string) bool {
	return !ovn.IsOwned(ids) || OwnerRef{Kind: ids[ovn.OwnerKindKey], Name: ids[ovn.OwnerKey]} != OwnerRef(a)
}

// DeleteOwned deletes every edgeovn row of one owner (a node's port, address set and
// policies; a pod's port), children unhooked from their parents first, and returns how many
// rows it deleted. A parent that still holds another owner's row stays.
func (c *Client) DeleteOwned(ctx context.Context, owner OwnerRef) (int, error) {
	if owner.Kind == "" || owner.Name == "" {
		return 0, fmt.Errorf("delete rows of %v: %w: owner kind and name must be set", owner, ovn.ErrInvalid)
	}
	n, err := c.deleteUnless(ctx, allBut(owner))
	if err != nil {
		return n, fmt.Errorf("delete rows of %s %s: %w", owner.Kind, owner.Name, err)
	}
	return n, nil
}

// deleteUnless deletes the edgeovn rows k does not keep, GCBatch rows per transaction.
func (c *Client) deleteUnless(ctx context.Context, k keeper) (int, error) {
	units, err := c.gcUnits(ctx, k)
	if err != nil {
		return 0, err
	}
	deleted := 0
	for start := 0; start < len(units); start += GCBatch {
		batch := units[start:min(start+GCBatch, len(units))]
		var ops []ovsdb.Operation
		for _, u := range batch {
			ops = append(ops, u...)
		}
		if err := c.commit(ctx, ops); err != nil {
			return deleted, fmt.Errorf("delete %d rows: %w", len(batch), err)
		}
		deleted += len(batch)
	}
	return deleted, nil
}

// gcUnits returns, per row to delete, the operations that delete it: children (ports,
// routes, policies, ACLs) first, each unhooked from its parent, then the parents.
func (c *Client) gcUnits(ctx context.Context, d keeper) ([][]ovsdb.Operation, error) {
	var switches []*nbdb.LogicalSwitch
	var routers []*nbdb.LogicalRouter
	var groups []*nbdb.PortGroup
	for _, l := range []any{&switches, &routers, &groups} {
		if err := c.nb.List(ctx, l); err != nil {
			return nil, fmt.Errorf("list parents from cache: %w", err)
		}
	}
	var children, parents [][]ovsdb.Operation
	for _, ls := range switches {
		kids, keep, err := c.gcChildren(ctx, d, nbdb.LogicalSwitchTable, ls.UUID, map[string][]string{"ports": ls.Ports, "acls": ls.ACLs})
		if err != nil {
			return nil, err
		}
		children = append(children, kids...)
		if !keep && !d.keeps(ls.ExternalIDs) {
			parents = append(parents, emptyThenDelete(nbdb.LogicalSwitchTable, ls.UUID, "ports", "acls"))
		}
	}
	for _, lr := range routers {
		kids, keep, err := c.gcChildren(ctx, d, nbdb.LogicalRouterTable, lr.UUID,
			map[string][]string{"ports": lr.Ports, "static_routes": lr.StaticRoutes, "policies": lr.Policies, "nat": lr.Nat})
		if err != nil {
			return nil, err
		}
		children = append(children, kids...)
		if !keep && !d.keeps(lr.ExternalIDs) {
			parents = append(parents, emptyThenDelete(nbdb.LogicalRouterTable, lr.UUID, "ports", "static_routes", "policies", "nat"))
		}
	}
	for _, pg := range groups {
		kids, keep, err := c.gcChildren(ctx, d, nbdb.PortGroupTable, pg.UUID, map[string][]string{"acls": pg.ACLs})
		if err != nil {
			return nil, err
		}
		children = append(children, kids...)
		if !keep && !d.keeps(pg.ExternalIDs) {
			parents = append(parents, emptyThenDelete(nbdb.PortGroupTable, pg.UUID, "acls"))
		}
	}
	roots, err := c.gcRoots(ctx, d)
	if err != nil {
		return nil, err
	}
	return append(append(children, parents...), roots...), nil
}

// emptyThenDelete deletes a parent row only if its child columns are empty once its own
// children are unhooked (they come earlier in the same or an earlier transaction). A child
// another writer added after the cache was read (an operator's ovn-nbctl acl-add) fails the
// transaction as a conflict instead of being garbage-collected with its parent; the next pass
// sees it and keeps the parent.
func emptyThenDelete(table, uuid string, childCols ...string) []ovsdb.Operation {
	ops := make([]ovsdb.Operation, 0, len(childCols)+1)
	for _, col := range childCols {
		ops = append(ops, ovn.WaitPresent(table, uuid, col, ovsdb.OvsSet{GoSet: []any{}}))
	}
	return append(ops, ovn.DeleteRow(table, uuid))
}

// gcChildren returns the deletions of the parent's undesired children and whether the
// parent holds any child that stays (so it must stay too).
func (c *Client) gcChildren(ctx context.Context, d keeper, table, uuid string, cols map[string][]string) ([][]ovsdb.Operation, bool, error) {
	var units [][]ovsdb.Operation
	keep := false
	for col, refs := range cols {
		childTable := childTables[table+"."+col]
		for _, ref := range refs {
			ids, err := c.externalIDs(ctx, childTable, ref)
			if err != nil {
				return nil, false, err
			}
			if d.keeps(ids) {
				keep = true
				continue
			}
			units = append(units, []ovsdb.Operation{
				ovn.MutateRefs(table, uuid, col, ovsdb.MutateOperationDelete, ref),
				ovn.DeleteRow(childTable, ref),
			})
		}
	}
	return units, keep, nil
}

var childTables = map[string]string{
	nbdb.LogicalSwitchTable + ".ports":         nbdb.LogicalSwitchPortTable,
	nbdb.LogicalSwitchTable + ".acls":          nbdb.ACLTable,
	nbdb.LogicalRouterTable + ".ports":         nbdb.LogicalRouterPortTable,
	nbdb.LogicalRouterTable + ".static_routes": nbdb.LogicalRouterStaticRouteTable,
	nbdb.LogicalRouterTable + ".policies":      nbdb.LogicalRouterPolicyTable,
	nbdb.LogicalRouterTable + ".nat":           nbdb.NATTable,
	nbdb.PortGroupTable + ".acls":              nbdb.ACLTable,
}

// externalIDs reads a child row's external_ids through the _uuid index.
func (c *Client) externalIDs(ctx context.Context, table, uuid string) (map[string]string, error) {
	var row model.Model
	switch table {
	case nbdb.LogicalSwitchPortTable:
		row = &nbdb.LogicalSwitchPort{UUID: uuid}
	case nbdb.ACLTable:
		row = &nbdb.ACL{UUID: uuid}
	case nbdb.LogicalRouterPortTable:
		row = &nbdb.LogicalRouterPort{UUID: uuid}
	case nbdb.LogicalRouterStaticRouteTable:
		row = &nbdb.LogicalRouterStaticRoute{UUID: uuid}
	case nbdb.LogicalRouterPolicyTable:
		row = &nbdb.LogicalRouterPolicy{UUID: uuid}
	case nbdb.NATTable:
		row = &nbdb.NAT{UUID: uuid}
	default:
		return nil, fmt.Errorf("gc: no child table %q", table)
	}
	if err := c.nb.Get(ctx, row); err != nil {
		return nil, fmt.Errorf("read %s %s from cache: %w", table, uuid, err)
	}
	return model.Model(row).(interface{ GetExternalIDs() map[string]string }).GetExternalIDs(), nil
}

// gcRoots returns the deletions of undesired rows of the root tables without children.
func (c *Client) gcRoots(ctx context.Context, d keeper) ([][]ovsdb.Operation, error) {
	var sets []*nbdb.AddressSet
	var lbs []*nbdb.LoadBalancer
	if err := c.nb.List(ctx, &sets); err != nil {
		return nil, fmt.Errorf("list address sets from cache: %w", err)
	}
	if err := c.nb.List(ctx, &lbs); err != nil {
		return nil, fmt.Errorf("list load balancers from cache: %w", err)
	}
	var units [][]ovsdb.Operation
	for _, s := range sets {
		if !d.keeps(s.ExternalIDs) {
			units = append(units, []ovsdb.Operation{ovn.DeleteRow(nbdb.AddressSetTable, s.UUID)})
		}
	}
	for _, lb := range lbs {
		if !d.keeps(lb.ExternalIDs) {
			units = append(units, []ovsdb.Operation{ovn.DeleteRow(nbdb.LoadBalancerTable, lb.UUID)})
		}
	}
	return units, nil
}
