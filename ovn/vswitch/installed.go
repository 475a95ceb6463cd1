package vswitch

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/model"

	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// WaitInstalled returns once the interface's external_ids has ovn-installed="true", which
// ovn-controller sets when the port's flows are in. It waits on cache events, never polls; on
// ctx's end it returns ctx.Err() wrapped with the interface's name. The interface need not
// exist yet.
func (c *Client) WaitInstalled(ctx context.Context, ifaceName string) error {
	for {
		changed, release := c.subscribe(ifaceName)
		// Checked after subscribing: a change between the check and the wait closes changed.
		done := c.installed(ctx, ifaceName)
		if done {
			release()
			return nil
		}
		select {
		case <-changed:
			release()
		case <-ctx.Done():
			release()
			return fmt.Errorf("wait for interface %s to be ovn-installed: %w", ifaceName, ctx.Err())
		}
	}
}

func (c *Client) installed(ctx context.Context, name string) bool {
	iface := &vswitchdb.Interface{Name: name}
	if err := c.ovs.Get(ctx, iface); err != nil {
		return false
	}
	return iface.ExternalIDs[KeyOVNInstalled] == "true"
}

// subscribe returns a channel closed at the interface's next add or update.
func (c *Client) subscribe(name string) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ws := c.waiters[name]
	if ws == nil {
		ws = &waitSet{ch: make(chan struct{})}
		c.waiters[name] = ws
	}
	ws.n++
	return ws.ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		ws.n--
		if ws.n == 0 && c.waiters[name] == ws {
			delete(c.waiters, name)
		}
	}
}

// interfaceChanged wakes the waiters of the interface that changed.
func (c *Client) interfaceChanged(m model.Model) {
	iface, ok := m.(*vswitchdb.Interface)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ws := c.waiters[iface.Name]; ws != nil {
		close(ws.ch)
		delete(c.waiters, iface.Name)
	}
}
