package southbound

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
)

// DeleteChassis removes the chassis registered as name, as `ovn-sbctl chassis-del` does: its
// Chassis row (its Encap rows go with it) and its Chassis_Private row, in one transaction. It
// reports whether there was anything to remove; a chassis that is not there is success.
// ovn-northd then unbinds the chassis's ports and the other hosts drop their tunnels to it.
// Call it only for a host that is gone: a running ovn-controller registers itself again.
func (c *Client) DeleteChassis(ctx context.Context, name string) (bool, error) {
	if name == "" {
		return false, fmt.Errorf("delete chassis: %w: empty name", ovn.ErrInvalid)
	}
	where := []ovsdb.Condition{ovsdb.NewCondition("name", ovsdb.ConditionEqual, name)}
	ops := []ovsdb.Operation{
		{Op: ovsdb.OperationDelete, Table: "Chassis", Where: where},
		{Op: ovsdb.OperationDelete, Table: "Chassis_Private", Where: where},
	}
	results, err := c.sb.Transact(ctx, ops...)
	if err == nil {
		_, err = ovsdb.CheckOperationResults(results, ops)
	}
	if err != nil {
		return false, fmt.Errorf("delete chassis %s: %w", name, err)
	}
	n := 0
	for _, r := range results[:len(ops)] {
		n += r.Count
	}
	return n > 0, nil
}
