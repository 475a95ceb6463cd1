package northbound

import (
	"context"
	"errors"
	"fmt"

	"github.com/ovn-org/libovsdb/client"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// The lookups read the cache through an index (a schema index for ports, port groups and
// address sets, a client index set up by Connect for routers and load balancers) and return
// nil when no row has the name; switches are read without a copy (switchports.go). Names without a schema index are not unique, so
// more than one row is ErrConflict.

func (c *Client) routerByName(ctx context.Context, name string) (*nbdb.LogicalRouter, error) {
	var rows []*nbdb.LogicalRouter
	err := c.nb.Where(&nbdb.LogicalRouter{Name: name}).List(ctx, &rows)
	return one(rows, err, "logical router", name)
}

func (c *Client) loadBalancerByName(ctx context.Context, name string) (*nbdb.LoadBalancer, error) {
	var rows []*nbdb.LoadBalancer
	err := c.nb.Where(&nbdb.LoadBalancer{Name: name}).List(ctx, &rows)
	return one(rows, err, "load balancer", name)
}

func (c *Client) routerPortByName(ctx context.Context, name string) (*nbdb.LogicalRouterPort, error) {
	row := &nbdb.LogicalRouterPort{Name: name}
	return byIndex(c.nb.Get(ctx, row), row, "logical router port", name)
}

func (c *Client) switchPortByName(ctx context.Context, name string) (*nbdb.LogicalSwitchPort, error) {
	row := &nbdb.LogicalSwitchPort{Name: name}
	return byIndex(c.nb.Get(ctx, row), row, "logical switch port", name)
}

func (c *Client) portGroupByName(ctx context.Context, name string) (*nbdb.PortGroup, error) {
	row := &nbdb.PortGroup{Name: name}
	return byIndex(c.nb.Get(ctx, row), row, "port group", name)
}

func (c *Client) addressSetByName(ctx context.Context, name string) (*nbdb.AddressSet, error) {
	row := &nbdb.AddressSet{Name: name}
	return byIndex(c.nb.Get(ctx, row), row, "address set", name)
}

// byUUID returns the rows of uuids (references of a parent row) that are in the cache, each
// found through the _uuid index; newRow makes an empty row with the given UUID.
func byUUID[T any](ctx context.Context, c *Client, uuids []string, newRow func(uuid string) *T) ([]*T, error) {
	out := make([]*T, 0, len(uuids))
	for _, u := range uuids {
		row := newRow(u)
		err := c.nb.Get(ctx, row)
		if errors.Is(err, client.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read row %s from cache: %w", u, err)
		}
		out = append(out, row)
	}
	return out, nil
}

func byIndex[T any](err error, row *T, what, name string) (*T, error) {
	switch {
	case errors.Is(err, client.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s %q from cache: %w", what, name, err)
	}
	return row, nil
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
