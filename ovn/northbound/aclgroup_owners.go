package northbound

import (
	"context"
	"fmt"
	"slices"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ACLGroupOwners returns, sorted, the names of the owners of kind that hold edgeovn port
// groups or address sets: what a reconciliation compares with the objects that still exist
// (then DeleteOwned removes a gone owner's rows).
func (c *Client) ACLGroupOwners(ctx context.Context, kind string) ([]string, error) {
	seen := map[string]bool{}
	of := func(ids map[string]string) bool {
		if ovn.IsOwned(ids) && ids[ovn.OwnerKindKey] == kind {
			seen[ids[ovn.OwnerKey]] = true
		}
		return false
	}
	var groups []*nbdb.PortGroup
	if err := c.nb.WhereCache(func(pg *nbdb.PortGroup) bool { return of(pg.ExternalIDs) }).List(ctx, &groups); err != nil {
		return nil, fmt.Errorf("read port groups from cache: %w", err)
	}
	var sets []*nbdb.AddressSet
	if err := c.nb.WhereCache(func(as *nbdb.AddressSet) bool { return of(as.ExternalIDs) }).List(ctx, &sets); err != nil {
		return nil, fmt.Errorf("read address sets from cache: %w", err)
	}
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}
