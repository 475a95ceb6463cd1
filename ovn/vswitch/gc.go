package vswitch

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// gcBatch is how many ports one GC transaction deletes at most, so that a GC after a mass
// pod deletion does not hold the database in one huge transaction; a variable so that tests
// can make batches small.
var gcBatch = 100

// GC deletes the edgeovn pod ports on bridge for which keep returns false, with their
// interfaces and QoS rows, at most a batch of them per transaction, and returns how many it
// deleted. It considers only the ports Ports lists: ports without edgeovn's tag and the
// bridge's own internal port are never touched. A missing bridge has nothing to collect. A
// port re-added between the read and the commit is not protected: keep must reflect the
// desired state at the time of the call.
func (c *Client) GC(ctx context.Context, bridge string, keep func(Port) bool) (int, error) {
	if err := validateIfaceName("bridge", bridge); err != nil {
		return 0, fmt.Errorf("gc ports: %w", err)
	}
	if keep == nil {
		return 0, fmt.Errorf("gc ports of bridge %s: %w: nil keep function", bridge, ovn.ErrInvalid)
	}
	br, ports, err := c.podPorts(ctx, bridge)
	if err != nil {
		return 0, fmt.Errorf("gc ports of bridge %s: %w", bridge, err)
	}
	var doomed []podPort
	for _, p := range ports {
		if !keep(p.Port) {
			doomed = append(doomed, p)
		}
	}
	deleted := 0
	for len(doomed) > 0 {
		n := min(gcBatch, len(doomed))
		if err := c.commit(ctx, c.gcOps(ctx, br, doomed[:n])); err != nil {
			return deleted, fmt.Errorf("gc ports of bridge %s (%d deleted so far): %w", bridge, deleted, err)
		}
		deleted += n
		doomed = doomed[n:]
	}
	return deleted, nil
}

// gcOps removes ports from the bridge in one mutation and deletes their rows; interfaces
// go with their ports, QoS rows are deleted explicitly since nothing else would.
func (c *Client) gcOps(ctx context.Context, br *vswitchdb.Bridge, ports []podPort) []ovsdb.Operation {
	uuids := make([]string, len(ports))
	for i, p := range ports {
		uuids[i] = p.row.UUID
	}
	ops := []ovsdb.Operation{
		ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", br.Name),
		ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationDelete, uuids...),
	}
	for _, p := range ports {
		ops = append(ops, ovn.DeleteRow(vswitchdb.PortTable, p.row.UUID))
		ops = append(ops, c.ownedQoSDelete(ctx, p.row)...)
	}
	return ops
}
