package northbound

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// OwnedLoadBalancers is every load balancer one owner (a Service) wants, as members of one
// group. An owner's load balancer that is not wanted any more is deleted.
type OwnedLoadBalancers struct {
	Owner OwnerRef
	Group string
	Want  []LoadBalancerSpec // each Spec's Owner must be Owner
}

// SyncLoadBalancers makes the owner's load balancers exactly Want, in one transaction,
// and reports whether it wrote anything. An owner with nothing wanted loses every row.
func (c *Client) SyncLoadBalancers(ctx context.Context, req OwnedLoadBalancers) (bool, error) {
	ops, err := c.syncLoadBalancersOps(ctx, req)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return false, fmt.Errorf("sync load balancers of %s %s: %w", req.Owner.Kind, req.Owner.Name, err)
	}
	return len(ops) > 0, nil
}

func (c *Client) syncLoadBalancersOps(ctx context.Context, req OwnedLoadBalancers) ([]ovsdb.Operation, error) {
	if err := req.Owner.validate("load balancers"); err != nil {
		return nil, err
	}
	group, err := c.loadBalancerGroupByName(ctx, req.Group)
	switch {
	case err != nil:
		return nil, err
	case group == nil:
		return nil, fmt.Errorf("load balancer group %s: %w", req.Group, ovn.ErrNotFound)
	}
	have, err := c.ownedLoadBalancers(ctx, req.Owner)
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	wanted := map[string]bool{}
	for _, spec := range req.Want {
		if spec.Owner != req.Owner {
			return nil, fmt.Errorf("%w: load balancer %s: owner %v, want %v", ovn.ErrInvalid, spec.Name, spec.Owner, req.Owner)
		}
		wanted[spec.Name] = true
		if ops, err = c.groupMemberOps(ctx, spec, group, ops); err != nil {
			return nil, err
		}
	}
	for _, lb := range have {
		if !wanted[lb.Name] {
			ops = append(ops, ovn.DeleteRow(nbdb.LoadBalancerTable, lb.UUID))
		}
	}
	return ops, nil
}

// groupMemberOps appends what makes the load balancer match spec and belong to group.
func (c *Client) groupMemberOps(ctx context.Context, spec LoadBalancerSpec, group *nbdb.LoadBalancerGroup, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	ref, ops, err := c.loadBalancerRowOps(ctx, spec, ops)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(group.LoadBalancer, ref) {
		ops = append(ops, ovn.MutateRefs(nbdb.LoadBalancerGroupTable, group.UUID, "load_balancer", ovsdb.MutateOperationInsert, ref))
	}
	return ops, nil
}

// ownedLoadBalancers returns the edgeovn load balancers of one owner.
func (c *Client) ownedLoadBalancers(ctx context.Context, owner OwnerRef) ([]*nbdb.LoadBalancer, error) {
	var rows []*nbdb.LoadBalancer
	err := c.nb.WhereCache(func(lb *nbdb.LoadBalancer) bool {
		return ovn.IsOwned(lb.ExternalIDs) && lb.ExternalIDs[ovn.OwnerKindKey] == owner.Kind && lb.ExternalIDs[ovn.OwnerKey] == owner.Name
	}).List(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read load balancers of %s %s from cache: %w", owner.Kind, owner.Name, err)
	}
	return rows, nil
}

// LoadBalancerOwners returns the owners (names) of every edgeovn load balancer of one kind.
func (c *Client) LoadBalancerOwners(ctx context.Context, kind string) (map[string]bool, error) {
	var rows []*nbdb.LoadBalancer
	err := c.nb.WhereCache(func(lb *nbdb.LoadBalancer) bool {
		return ovn.IsOwned(lb.ExternalIDs) && lb.ExternalIDs[ovn.OwnerKindKey] == kind
	}).List(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read %s load balancers from cache: %w", kind, err)
	}
	out := make(map[string]bool, len(rows))
	for _, lb := range rows {
		out[lb.ExternalIDs[ovn.OwnerKey]] = true
	}
	return out, nil
}
