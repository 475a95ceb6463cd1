package node

import (
	"context"

	"github.com/vishvananda/netlink"
)

// readinessTrigger is what watchReadiness pokes: the health Monitor.
type readinessTrigger interface {
	Trigger()
	Ready() bool
}

// watchReadiness re-evaluates readiness on the events that change it, so the node role is
// ready the moment what the ADD path needs exists, not at the next tick: a link event of br-int
// or ovn0 (ovs-vswitchd makes the netdev bridge's device some time after its row is
// committed), at any time; and, while not ready, any change of the host's bridges, ports and
// interfaces in the Open_vSwitch database (ovn-controller marking ovn0 installed). While
// ready, database changes are the pods' own and trigger nothing. A link watch that cannot
// start is logged: the Monitor's retry timer stands in for it. It returns when ctx ends.
func (r *Role) watchReadiness(ctx context.Context, m readinessTrigger, changes <-chan struct{}) {
	links := make(chan netlink.LinkUpdate, 64)
	done := make(chan struct{})
	defer close(done)
	if err := netlink.LinkSubscribe(links, done); err != nil {
		r.log.Warn("readiness: cannot watch link events, re-checking on the timer", "err", err)
		links = nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-links:
			if !ok {
				links = nil
				continue
			}
			if n := u.Link.Attrs().Name; n == Bridge || n == HostInterface {
				m.Trigger()
			}
		case <-changes:
			if !m.Ready() {
				m.Trigger()
			}
		}
	}
}
