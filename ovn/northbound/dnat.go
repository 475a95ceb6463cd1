package northbound

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// DNATSpec is an OvnDnatRule's load balancer on its VPC's router, as Kube-OVN's AddDnatRule
// makes it: named as the rule, one VIP "<eip>:<externalPort>" to "<ip>:<internalPort>", in
// the router's load_balancer column (OVN applies it where traffic enters through the
// router's gateway port, and un-NATs the replies).
type DNATSpec struct {
	Router   string
	Name     string
	Protocol nbdb.LoadBalancerProtocol
	VIP      netip.AddrPort
	Backend  netip.AddrPort
	Owner    OwnerRef
}

// Validate reports what is wrong with the spec.
func (s DNATSpec) Validate() error {
	what := fmt.Sprintf("dnat %s %s", s.Name, s.VIP)
	switch {
	case validateName("router", s.Router) != nil || s.Name == "":
		return fmt.Errorf("%w: %s: router and name are required", ovn.ErrInvalid, what)
	case s.Protocol != nbdb.LoadBalancerProtocolTCP && s.Protocol != nbdb.LoadBalancerProtocolUDP:
		return fmt.Errorf("%w: %s: protocol must be tcp or udp", ovn.ErrInvalid, what)
	case !s.VIP.IsValid() || !s.Backend.IsValid() || s.VIP.Port() == 0 || s.Backend.Port() == 0:
		return fmt.Errorf("%w: %s: addresses with ports are required", ovn.ErrInvalid, what)
	}
	return s.Owner.validate(what)
}

// EnsureDNAT makes the owner's one load balancer spec's and puts it on the router (and on no
// other), in one transaction; when all is right nothing is written.
func (c *Client) EnsureDNAT(ctx context.Context, spec DNATSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	lr, err := c.ownedRouter(ctx, spec.Router)
	if err != nil {
		return fmt.Errorf("ensure dnat %s: %w", spec.Name, err)
	}
	owned, err := c.ownedLBs(ctx, spec.Owner)
	if err != nil {
		return err
	}
	proto := spec.Protocol
	want := &nbdb.LoadBalancer{UUID: "new_dnat_lb", Name: spec.Name, Protocol: &proto,
		Vips: map[string]string{spec.VIP.String(): spec.Backend.String()}, ExternalIDs: spec.Owner.ids()}
	var ops []ovsdb.Operation
	var keep string
	for _, lb := range owned {
		if keep == "" && lb.Name == want.Name {
			keep = lb.UUID
			if lb.Protocol == nil || *lb.Protocol != proto || !maps.Equal(lb.Vips, want.Vips) {
				want.UUID = lb.UUID
				upd, err := c.nb.Where(want).Update(want, &want.Protocol, &want.Vips)
				if err != nil {
					return fmt.Errorf("build update of load balancer %s: %w", spec.Name, err)
				}
				ops = append(ops, upd...)
			}
			continue
		}
		if ops, err = c.unhookLBOps(ctx, lb.UUID, "", ops); err != nil {
			return err
		}
		ops = append(ops, ovn.DeleteRow(nbdb.LoadBalancerTable, lb.UUID))
	}
	if keep == "" {
		ins, err := c.nb.Create(want)
		if err != nil {
			return fmt.Errorf("build load balancer %s: %w", spec.Name, err)
		}
		ops, keep = append(ops, ins...), want.UUID
	} else if ops, err = c.unhookLBOps(ctx, keep, lr.UUID, ops); err != nil {
		return err
	}
	if !slices.Contains(lr.LoadBalancer, keep) {
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "load_balancer", ovsdb.MutateOperationInsert, keep))
	}
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("ensure dnat %s on %s: %w", spec.Name, spec.Router, err)
	}
	return nil
}

// DeleteDNAT removes the owner's load balancers from every router and deletes them.
func (c *Client) DeleteDNAT(ctx context.Context, owner OwnerRef) (int, error) {
	owned, err := c.ownedLBs(ctx, owner)
	if err != nil {
		return 0, err
	}
	var ops []ovsdb.Operation
	for _, lb := range owned {
		if ops, err = c.unhookLBOps(ctx, lb.UUID, "", ops); err != nil {
			return 0, err
		}
		ops = append(ops, ovn.DeleteRow(nbdb.LoadBalancerTable, lb.UUID))
	}
	if err := c.commit(ctx, ops); err != nil {
		return 0, fmt.Errorf("delete dnat of %s: %w", owner.Name, err)
	}
	return len(owned), nil
}

func (c *Client) ownedLBs(ctx context.Context, owner OwnerRef) ([]*nbdb.LoadBalancer, error) {
	var lbs []*nbdb.LoadBalancer
	ids := owner.ids()
	if err := c.nb.WhereCache(func(lb *nbdb.LoadBalancer) bool { return ovn.HasAll(lb.ExternalIDs, ids) }).List(ctx, &lbs); err != nil {
		return nil, fmt.Errorf("list load balancers from cache: %w", err)
	}
	slices.SortFunc(lbs, func(a, b *nbdb.LoadBalancer) int { return cmp.Compare(a.UUID, b.UUID) })
	return lbs, nil
}

// unhookLBOps appends the removal of the load balancer from every router but except.
func (c *Client) unhookLBOps(ctx context.Context, lb, except string, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	var routers []*nbdb.LogicalRouter
	if err := c.nb.WhereCache(func(lr *nbdb.LogicalRouter) bool { return lr.UUID != except && slices.Contains(lr.LoadBalancer, lb) }).List(ctx, &routers); err != nil {
		return nil, fmt.Errorf("list routers from cache: %w", err)
	}
	for _, lr := range routers {
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, lr.UUID, "load_balancer", ovsdb.MutateOperationDelete, lb))
	}
	return ops, nil
}
