package vswitch

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// Keys of the Open_vSwitch row's external_ids that ovn-controller reads.
const (
	KeySystemID  = "system-id"
	KeyOVNRemote = "ovn-remote"
	KeyEncapType = "ovn-encap-type"
	KeyEncapIP   = "ovn-encap-ip"
)

// SetOVNConfig sets the given keys in the Open_vSwitch row's external_ids and leaves every
// other key as it is. When all keys already have these values nothing is written.
func (c *Client) SetOVNConfig(ctx context.Context, config map[string]string) error {
	if _, ok := config[""]; ok {
		return fmt.Errorf("set ovn config: %w: empty external_ids key", ovn.ErrInvalid)
	}
	root, err := c.root(ctx)
	if err != nil {
		return fmt.Errorf("set ovn config: %w", err)
	}
	changed := make(map[string]string)
	for k, v := range config {
		if cur, ok := root.ExternalIDs[k]; !ok || cur != v {
			changed[k] = v
		}
	}
	if len(changed) == 0 {
		return nil
	}
	ops := []ovsdb.Operation{setKeys(vswitchdb.OpenvSwitchTable, root.UUID, "external_ids", changed, nil)}
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("set ovn config keys %v: %w", slices.Sorted(maps.Keys(changed)), err)
	}
	return nil
}

// UnsetOVNConfig removes the given keys from the Open_vSwitch row's external_ids and leaves
// every other key as it is. When none of them is there nothing is written.
func (c *Client) UnsetOVNConfig(ctx context.Context, keys ...string) error {
	root, err := c.root(ctx)
	if err != nil {
		return fmt.Errorf("unset ovn config: %w", err)
	}
	var present []any
	for _, k := range keys {
		if _, ok := root.ExternalIDs[k]; ok {
			present = append(present, k)
		}
	}
	if len(present) == 0 {
		return nil
	}
	op := ovsdb.Operation{
		Op:        ovsdb.OperationMutate,
		Table:     vswitchdb.OpenvSwitchTable,
		Where:     []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: root.UUID})},
		Mutations: []ovsdb.Mutation{*ovsdb.NewMutation("external_ids", ovsdb.MutateOperationDelete, ovsdb.OvsSet{GoSet: present})},
	}
	if err := c.commit(ctx, []ovsdb.Operation{op}); err != nil {
		return fmt.Errorf("unset ovn config keys %v: %w", present, err)
	}
	return nil
}

// setKeys builds one mutate that deletes the keys of set and of drop and then inserts set:
// OVSDB's map insert does not overwrite existing keys, and key-wise mutation keeps keys that
// others write into the same column.
func setKeys(table, uuid, column string, set map[string]string, drop []string) ovsdb.Operation {
	keys := make([]any, 0, len(set)+len(drop))
	goMap := make(map[any]any, len(set))
	for k, v := range set {
		keys = append(keys, k)
		goMap[k] = v
	}
	for _, k := range drop {
		keys = append(keys, k)
	}
	return ovsdb.Operation{
		Op:    ovsdb.OperationMutate,
		Table: table,
		Where: []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: uuid})},
		Mutations: []ovsdb.Mutation{
			*ovsdb.NewMutation(column, ovsdb.MutateOperationDelete, ovsdb.OvsSet{GoSet: keys}),
			*ovsdb.NewMutation(column, ovsdb.MutateOperationInsert, ovsdb.OvsMap{GoMap: goMap}),
		},
	}
}

// merged returns base with over's keys set; neither is changed.
func merged(base, over map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(over))
	maps.Copy(out, base)
	maps.Copy(out, over)
	return out
}
