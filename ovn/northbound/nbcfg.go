package northbound

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// BumpNBCfg increments NB_Global's nb_cfg, as `ovn-nbctl --wait=hv` does. ovn-northd copies
// the value to the southbound database with the logical flows of everything northbound holds
// at that moment, and every ovn-controller reports it back (Chassis_Private nb_cfg, and
// external_ids:ovn-nb-cfg on its integration bridge) once those flows are in OpenFlow. It is
// the one write to a row edgeovn does not own: a counter every client may increment, which
// is why it is a mutation and not a set. A missing NB_Global row (ovn-northd creates it) is
// ovn.ErrNotFound.
func (c *Client) BumpNBCfg(ctx context.Context) error {
	var rows []nbdb.NBGlobal
	if err := c.nb.List(ctx, &rows); err != nil {
		return fmt.Errorf("bump nb_cfg: read NB_Global: %w", err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("bump nb_cfg: %d NB_Global rows: %w", len(rows), ovn.ErrNotFound)
	}
	op := ovsdb.Operation{
		Op:        ovsdb.OperationMutate,
		Table:     nbdb.NBGlobalTable,
		Where:     []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: rows[0].UUID})},
		Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("nb_cfg", ovsdb.MutateOperationAdd, 1)},
	}
	if err := c.commit(ctx, []ovsdb.Operation{op}); err != nil {
		return fmt.Errorf("bump nb_cfg: %w", err)
	}
	return nil
}
