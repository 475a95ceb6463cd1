package node

import (
	"context"

	"github.com/vishvananda/netlink"
)

// watchAddresses calls poke on every change of the host's addresses until ctx ends, so the
// networks this host publishes (edgeovn.io/host-networks, what the controller checks Subnets
// against) follow an address added or removed after the start, not only the Node's changes.
// A watch that cannot start is logged: the networks are then re-read at the Node's changes.
func (r *Role) watchAddresses(ctx context.Context, poke func()) {
	updates := make(chan netlink.AddrUpdate, 64)
	done := make(chan struct{})
	if err := netlink.AddrSubscribe(updates, done); err != nil {
		r.log.Warn("host networks: cannot watch address changes, re-reading them at the Node's changes", "err", err)
		return
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-updates:
				if !ok {
					return
				}
				poke()
			}
		}
	}()
}
