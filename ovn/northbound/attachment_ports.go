package northbound

import (
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// routerPortOps returns the reference to use for the router port (its UUID, or the named
// UUID of its insert) and the operations that create or repair it.
func (c *Client) routerPortOps(a attachment, cur *nbdb.LogicalRouterPort) (string, []ovsdb.Operation, error) {
	want := a.routerPortRow()
	if cur == nil {
		ops, err := c.nb.Create(&want)
		if err != nil {
			return "", nil, fmt.Errorf("build logical router port %s: %w", want.Name, err)
		}
		guard := ovn.WaitAbsent(nbdb.LogicalRouterPortTable, "name", want.Name)
		return want.UUID, append([]ovsdb.Operation{guard}, ops...), nil
	}
	if cur.MAC == want.MAC && sameSet(cur.Networks, want.Networks) && ovn.HasAll(cur.ExternalIDs, want.ExternalIDs) &&
		cur.Options[RouteTableOption] == a.RouteTable {
		return cur.UUID, nil, nil
	}
	want.UUID = cur.UUID
	want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
	want.Options = a.routerPortOptions(cur.Options)
	ops, err := c.nb.Where(&want).Update(&want, &want.MAC, &want.Networks, &want.Options, &want.ExternalIDs)
	if err != nil {
		return "", nil, fmt.Errorf("build update of logical router port %s: %w", want.Name, err)
	}
	guard := ovn.WaitPresent(nbdb.LogicalRouterPortTable, cur.UUID, "name", want.Name)
	return cur.UUID, append([]ovsdb.Operation{guard}, ops...), nil
}

// switchPortOps is routerPortOps for the switch side: a port of type router.
func (c *Client) switchPortOps(a attachment, cur *nbdb.LogicalSwitchPort) (string, []ovsdb.Operation, error) {
	want := a.switchPortRow()
	if cur == nil {
		ops, err := c.nb.Create(&want)
		if err != nil {
			return "", nil, fmt.Errorf("build logical switch port %s: %w", want.Name, err)
		}
		guard := ovn.WaitAbsent(nbdb.LogicalSwitchPortTable, "name", want.Name)
		return want.UUID, append([]ovsdb.Operation{guard}, ops...), nil
	}
	if cur.Type == want.Type && sameSet(cur.Addresses, want.Addresses) &&
		ovn.HasAll(cur.Options, want.Options) && ovn.HasAll(cur.ExternalIDs, want.ExternalIDs) {
		return cur.UUID, nil, nil
	}
	want.UUID = cur.UUID
	want.Options = merged(cur.Options, want.Options)
	want.ExternalIDs = merged(cur.ExternalIDs, want.ExternalIDs)
	ops, err := c.nb.Where(&want).Update(&want, &want.Type, &want.Addresses, &want.Options, &want.ExternalIDs)
	if err != nil {
		return "", nil, fmt.Errorf("build update of logical switch port %s: %w", want.Name, err)
	}
	guard := ovn.WaitPresent(nbdb.LogicalSwitchPortTable, cur.UUID, "name", want.Name)
	return cur.UUID, append([]ovsdb.Operation{guard}, ops...), nil
}

// sameSet compares OVSDB set columns, whose order the server does not keep.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
