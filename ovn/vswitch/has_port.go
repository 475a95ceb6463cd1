package vswitch

import "context"

// HasPort reports whether a port of that name exists, on any bridge, edgeovn's or not.
func (c *Client) HasPort(ctx context.Context, name string) (bool, error) {
	p, err := c.portByName(ctx, name)
	return p != nil, err
}
