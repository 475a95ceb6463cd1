package northbound

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// PortGroupACLRules returns the ACLs of owner's port group name as they are in northbound,
// sorted by direction, priority and match, and whether the group exists: what a caller keeps
// in force while it refuses a new spec (a SecurityGroup's rules stay as last applied while
// its members change). A group of that name that is not owner's is ovn.ErrNotOwned.
func (c *Client) PortGroupACLRules(ctx context.Context, owner OwnerRef, name string) ([]ACLRule, bool, error) {
	pg, err := c.portGroupByName(ctx, name)
	if err != nil || pg == nil {
		return nil, false, err
	}
	if err := claim(pg.ExternalIDs, owner, "port group "+name); err != nil {
		return nil, true, err
	}
	acls, err := byUUID(ctx, c, pg.ACLs, func(u string) *nbdb.ACL { return &nbdb.ACL{UUID: u} })
	if err != nil {
		return nil, true, fmt.Errorf("read acls of port group %s: %w", name, err)
	}
	out := make([]ACLRule, 0, len(acls))
	for _, a := range acls {
		r := ACLRule{Direction: a.Direction, Priority: a.Priority, Match: a.Match, Action: a.Action, Log: a.Log,
			AfterLB: a.Options["apply-after-lb"] == "true"}
		if a.Name != nil {
			r.Name = *a.Name
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ACLRule) int {
		if c := strings.Compare(string(a.Direction), string(b.Direction)); c != 0 {
			return c
		}
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		return strings.Compare(a.Match, b.Match)
	})
	return out, true, nil
}
