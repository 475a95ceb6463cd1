package vswitch

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/ovn"
)

// ErrNotInstalled means ovn-controller has not (or no longer) marked an interface's flows
// installed.
var ErrNotInstalled = errors.New("not ovn-installed")

// Ping asks the database server for an echo: it fails while the connection is down (the
// client reconnects on its own meanwhile), unlike the cache, which still shows the last rows.
func (c *Client) Ping(ctx context.Context) error {
	if err := c.ovs.Echo(ctx); err != nil {
		return fmt.Errorf("open_vswitch database not answering: %w", err)
	}
	return nil
}

// BridgePresent reports whether the bridge has a row, as the cache shows it.
func (c *Client) BridgePresent(ctx context.Context, name string) error {
	br, err := c.bridgeByName(ctx, name)
	if err != nil {
		return err
	}
	if br == nil {
		return fmt.Errorf("bridge %s: %w in the open_vswitch database", name, ovn.ErrNotFound)
	}
	return nil
}

// InterfaceInstalled reports whether ovn-controller has marked the interface's flows
// installed (external_ids:ovn-installed="true").
func (c *Client) InterfaceInstalled(ctx context.Context, name string) error {
	iface, err := c.interfaceByName(ctx, name)
	switch {
	case err != nil:
		return err
	case iface == nil:
		return fmt.Errorf("interface %s: %w in the open_vswitch database", name, ovn.ErrNotFound)
	case iface.ExternalIDs[KeyOVNInstalled] != "true":
		return fmt.Errorf("interface %s: %w", name, ErrNotInstalled)
	}
	return nil
}
