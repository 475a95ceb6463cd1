package northbound

import (
	"context"
	"fmt"
	"slices"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// Nodes lists, sorted, the nodes that have a join port: EnsureNode writes a node's port,
// address set and policies in one transaction, so these are all the nodes with rows.
func (c *Client) Nodes(ctx context.Context) ([]string, error) {
	var lsps []*nbdb.LogicalSwitchPort
	isNodePort := func(l *nbdb.LogicalSwitchPort) bool {
		return ovn.IsOwned(l.ExternalIDs) && l.ExternalIDs[ovn.OwnerKindKey] == ovn.KindNode
	}
	if err := c.nb.WhereCache(isNodePort).List(ctx, &lsps); err != nil {
		return nil, fmt.Errorf("list node ports from cache: %w", err)
	}
	names := make([]string, 0, len(lsps))
	for _, l := range lsps {
		names = append(names, l.ExternalIDs[ovn.OwnerKey])
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
