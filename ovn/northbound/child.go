package northbound

import (
	"fmt"

	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
)

// parentRef is the set column of a root row that holds references to child rows (a router's
// static_routes, a port group's acls).
type parentRef struct {
	Table  string
	UUID   string
	Name   string // the parent's name, which the guard checks is unchanged
	Column string
}

// insertChild appends the insert of row (whose UUID is the named UUID ref) and its
// reference from parent, guarded by the parent still existing, so the child is never left
// unreferenced (the server would drop it silently).
func (c *Client) insertChild(ops []ovsdb.Operation, row model.Model, ref string, p parentRef) ([]ovsdb.Operation, error) {
	insert, err := c.nb.Create(row)
	if err != nil {
		return nil, fmt.Errorf("build insert into %s: %w", p.Column, err)
	}
	ops = append(ops, ovn.WaitPresent(p.Table, p.UUID, "name", p.Name))
	ops = append(ops, insert...)
	return append(ops, ovn.MutateRefs(p.Table, p.UUID, p.Column, ovsdb.MutateOperationInsert, ref)), nil
}

// namedUUID makes a named UUID unique within one transaction of n operations so far.
func namedUUID(kind string, n int) string {
	return fmt.Sprintf("new_%s_%d", kind, n)
}
