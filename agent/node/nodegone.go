package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// errNodeDeleted is the readiness verdict while this host's own Node is gone from the API:
// the controller has then removed its join port and chassis, so ovn0 leads nowhere.
var errNodeDeleted = errors.New("this node's Node object was deleted from the cluster: ovn0 removed until the node is registered again")

// unwireHost runs when this host's own Node was deleted while the host was wired: it stops
// the drift loop from putting ovn0 back (the spec is cleared), removes ovn0 from br-int (its
// link and routes go with it) and makes readiness say why. The Node's return (a kubelet that
// registers again) wires the host afresh once the controller has given it a join port.
func (r *Role) unwireHost(ctx context.Context, log *slog.Logger) error {
	r.ready.nodeGone.Store(true)
	r.host.mu.Lock()
	defer r.host.mu.Unlock()
	if r.host.spec == nil {
		return nil
	}
	// A missing port is success for DeletePort.
	if err := r.ovs.DeletePort(ctx, Bridge, HostInterface); err != nil {
		return fmt.Errorf("remove %s after node %s was deleted: %w", HostInterface, r.req.NodeName, err)
	}
	r.host.spec = nil
	log.Warn("own Node deleted from the cluster: host interface removed", "node", r.req.NodeName, "interface", HostInterface)
	return nil
}
