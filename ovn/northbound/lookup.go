package northbound

import (
	"context"
	"fmt"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// The lookups read the cache and return nil when no row has the name. Logical_Router and
// Logical_Switch names are not unique in the schema, so more than one row is ErrConflict.

func (c *Client) routerByName(ctx context.Context, name string) (*nbdb.LogicalRouter, error) {
	var rows []*nbdb.LogicalRouter
	err := c.nb.WhereCache(func(r *nbdb.LogicalRouter) bool { return r.Name == name }).List(ctx, &rows)
	return one(rows, err, "logical router", name)
}

func (c *Client) switchByName(ctx context.Context, name string) (*nbdb.LogicalSwitch, error) {
	var rows []*nbdb.LogicalSwitch
	err := c.nb.WhereCache(func(s *nbdb.LogicalSwitch) bool { return s.Name == name }).List(ctx, &rows)
	return one(rows, err, "logical switch", name)
}

func (c *Client) routerPortByName(ctx context.Context, name string) (*nbdb.LogicalRouterPort, error) {
	var rows []*nbdb.LogicalRouterPort
	err := c.nb.WhereCache(func(p *nbdb.LogicalRouterPort) bool { return p.Name == name }).List(ctx, &rows)
	return one(rows, err, "logical router port", name)
}

func (c *Client) switchPortByName(ctx context.Context, name string) (*nbdb.LogicalSwitchPort, error) {
	var rows []*nbdb.LogicalSwitchPort
	err := c.nb.WhereCache(func(p *nbdb.LogicalSwitchPort) bool { return p.Name == name }).List(ctx, &rows)
	return one(rows, err, "logical switch port", name)
}

// switchesHolding returns the switches whose ports include uuid.
func (c *Client) switchesHolding(ctx context.Context, uuid string) ([]*nbdb.LogicalSwitch, error) {
	var rows []*nbdb.LogicalSwitch
	err := c.nb.WhereCache(func(s *nbdb.LogicalSwitch) bool {
		for _, p := range s.Ports {
			if p == uuid {
				return true
			}
		}
		return false
	}).List(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read logical switches from cache: %w", err)
	}
	return rows, nil
}

func one[T any](rows []*T, err error, what, name string) (*T, error) {
	switch {
	case err != nil:
		return nil, fmt.Errorf("read %s %q from cache: %w", what, name, err)
	case len(rows) > 1:
		return nil, fmt.Errorf("%w: %d rows named %s %q", ovn.ErrConflict, len(rows), what, name)
	case len(rows) == 1:
		return rows[0], nil
	}
	return nil, nil
}
