package northbound

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// OptionUseCtInvMatch is NB_Global's options:use_ct_inv_match. Set to "false", ovn-northd no
// longer drops packets conntrack marks invalid. Kube-OVN always sets it so; edgeovn sets it
// only while a Subnet needs it (u2oInterconnection: an underlay pod's request to an overlay pod
// is routed on the pod's host and the reply on the overlay pod's, so the underlay switch's
// conntrack zone on the reply's host sees a reply without its request).
const OptionUseCtInvMatch = "use_ct_inv_match"

// SetGlobalOption sets (value != "") or removes (value == "") one of NB_Global's options, with
// mutations that touch no other key, and marks it edgeovn's in external_ids
// ("edgeovn-option:<key>"): a removal removes only an option edgeovn set (an administrator's
// stays). A missing NB_Global row (ovn-northd creates it) is ovn.ErrNotFound. Nothing is
// written when the option is already so.
func (c *Client) SetGlobalOption(ctx context.Context, key, value string) error {
	var rows []nbdb.NBGlobal
	if err := c.nb.List(ctx, &rows); err != nil {
		return fmt.Errorf("set NB_Global option %s: read NB_Global: %w", key, err)
	}
	if len(rows) != 1 {
		return fmt.Errorf("set NB_Global option %s: %d NB_Global rows: %w", key, len(rows), ovn.ErrNotFound)
	}
	mark := "edgeovn-option:" + key
	cur, has := rows[0].Options[key]
	_, ours := rows[0].ExternalIDs[mark]
	switch {
	case value == "" && (!has || !ours):
		return nil
	case value != "" && has && cur == value:
		return nil
	}
	where := []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: rows[0].UUID})}
	mutate := func(col string, op ovsdb.Mutator, v any) ovsdb.Operation {
		return ovsdb.Operation{Op: ovsdb.OperationMutate, Table: nbdb.NBGlobalTable, Where: where,
			Mutations: []ovsdb.Mutation{*ovsdb.NewMutation(col, op, v)}}
	}
	var ops []ovsdb.Operation
	if has {
		ops = append(ops, mutate("options", ovsdb.MutateOperationDelete, ovsdb.OvsSet{GoSet: []any{key}}))
	}
	if value != "" {
		ops = append(ops, mutate("options", ovsdb.MutateOperationInsert, ovsdb.OvsMap{GoMap: map[any]any{key: value}}),
			mutate("external_ids", ovsdb.MutateOperationInsert, ovsdb.OvsMap{GoMap: map[any]any{mark: "true"}}))
	} else {
		ops = append(ops, mutate("external_ids", ovsdb.MutateOperationDelete, ovsdb.OvsSet{GoSet: []any{mark}}))
	}
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("set NB_Global option %s=%q: %w", key, value, err)
	}
	return nil
}
