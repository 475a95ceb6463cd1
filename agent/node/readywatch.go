package node

import (
	"context"
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
// ready, database changes are the pods' own and trigger nothing. The link events come from the
// role's hostEvents; without them the Monitor's retry timer stands in. It returns when ctx
// ends.
func (r *Role) watchReadiness(ctx context.Context, m readinessTrigger, changes <-chan struct{}) {
	defer r.events.watch(&hostWatch{kinds: linkEvents, links: []string{Bridge, HostInterface}, poke: m.Trigger})()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			if !m.Ready() {
				m.Trigger()
			}
		}
	}
}
