package northbound

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ClusterLoadBalancerGroup is the load balancer group of the cluster's Services: attached
// once to every edgeovn switch, so a Service's load balancers join one group instead of
// every switch. Load_Balancer_Group has no external_ids column (NB 7.0.0): the name is
// edgeovn's mark, and edgeovn never touches another group.
const ClusterLoadBalancerGroup = "edgeovn_cluster_lbs"

// LoadBalancerGroupSpec is a load balancer group and the edgeovn switches it is attached to.
type LoadBalancerGroupSpec struct {
	Name     string
	Switches []string
}

// EnsureLoadBalancerGroup creates the group if it is missing and attaches it to every listed
// switch that lacks it, in one transaction; attachments to other switches are left alone.
func (c *Client) EnsureLoadBalancerGroup(ctx context.Context, spec LoadBalancerGroupSpec) error {
	ops, err := c.loadBalancerGroupOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure load balancer group %s: %w", spec.Name, err)
	}
	return nil
}

func (c *Client) loadBalancerGroupOps(ctx context.Context, spec LoadBalancerGroupSpec) ([]ovsdb.Operation, error) {
	if !matchName.MatchString(spec.Name) {
		return nil, fmt.Errorf("%w: load balancer group name %q", ovn.ErrInvalid, spec.Name)
	}
	cur, err := c.loadBalancerGroupByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	ref := ""
	if cur == nil {
		row := &nbdb.LoadBalancerGroup{UUID: namedUUID("lbg", 0), Name: spec.Name}
		insert, err := c.nb.Create(row)
		if err != nil {
			return nil, fmt.Errorf("build insert of load balancer group: %w", err)
		}
		ops = append(append(ops, ovn.WaitAbsent(nbdb.LoadBalancerGroupTable, "name", spec.Name)), insert...)
		ref = row.UUID
	} else {
		ref = cur.UUID
	}
	for _, name := range spec.Switches {
		ls, err := c.ownedSwitch(ctx, name)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ls.LoadBalancerGroup, ref) {
			ops = append(ops, ovn.WaitPresent(nbdb.LogicalSwitchTable, ls.UUID, "name", ls.Name),
				ovn.MutateRefs(nbdb.LogicalSwitchTable, ls.UUID, "load_balancer_group", ovsdb.MutateOperationInsert, ref))
		}
	}
	return ops, nil
}

func (c *Client) loadBalancerGroupByName(ctx context.Context, name string) (*nbdb.LoadBalancerGroup, error) {
	row := &nbdb.LoadBalancerGroup{Name: name}
	return byIndex(c.nb.Get(ctx, row), row, "load balancer group", name)
}
