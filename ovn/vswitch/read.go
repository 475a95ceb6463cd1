package vswitch

import (
	"context"
	"fmt"
	"maps"
)

// OVNConfig returns the Open_vSwitch row's external_ids: what ovn-controller reads (KeySystemID,
// KeyEncapIP, ...), as the cache shows it.
func (c *Client) OVNConfig(ctx context.Context) (map[string]string, error) {
	root, err := c.root(ctx)
	if err != nil {
		return nil, fmt.Errorf("read ovn config: %w", err)
	}
	return maps.Clone(root.ExternalIDs), nil
}

// InterfaceExternalIDs returns an interface's external_ids (iface-id, ovn-installed); ok is
// false when there is no such interface.
func (c *Client) InterfaceExternalIDs(ctx context.Context, name string) (ids map[string]string, ok bool, err error) {
	iface, err := c.interfaceByName(ctx, name)
	if err != nil || iface == nil {
		return nil, false, err
	}
	return maps.Clone(iface.ExternalIDs), true, nil
}
