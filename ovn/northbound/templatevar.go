package northbound

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// TemplateVars is one owner's template variables (Chassis_Template_Var) on every chassis:
// what a template load balancer's "^name" stands for on that chassis. Every variable of the
// owner starts with Prefix, so two owners never touch each other's.
type TemplateVars struct {
	Prefix string
	// Values maps chassis -> variable -> value. A chassis not listed keeps none of the
	// owner's variables; a chassis without a row gets one, tagged as its node's.
	Values map[string]map[string]string
}

// SyncTemplateVars makes the owner's variables exactly Values, with map mutations (other
// owners' variables in the same rows are untouched, so owners may sync concurrently), in
// one transaction; it reports whether it wrote anything.
func (c *Client) SyncTemplateVars(ctx context.Context, tv TemplateVars) (bool, error) {
	ops, err := c.templateVarOps(ctx, tv)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return false, fmt.Errorf("sync template variables %s*: %w", tv.Prefix, err)
	}
	return len(ops) > 0, nil
}

func (c *Client) templateVarOps(ctx context.Context, tv TemplateVars) ([]ovsdb.Operation, error) {
	if len(tv.Prefix) < 4 || !matchName.MatchString(tv.Prefix) {
		return nil, fmt.Errorf("%w: template variable prefix %q", ovn.ErrInvalid, tv.Prefix)
	}
	for ch, vars := range tv.Values {
		for name := range vars {
			if !strings.HasPrefix(name, tv.Prefix) || !matchName.MatchString(name) {
				return nil, fmt.Errorf("%w: chassis %s: variable %q outside prefix %s", ovn.ErrInvalid, ch, name, tv.Prefix)
			}
		}
	}
	var rows []*nbdb.ChassisTemplateVar
	if err := c.nb.List(ctx, &rows); err != nil {
		return nil, fmt.Errorf("read chassis template variables from cache: %w", err)
	}
	var ops []ovsdb.Operation
	seen := map[string]bool{}
	for _, row := range rows {
		seen[row.Chassis] = true
		ops = append(ops, varMutations(row, tv.Prefix, tv.Values[row.Chassis])...)
	}
	for ch, vars := range tv.Values {
		if seen[ch] || len(vars) == 0 {
			continue
		}
		row := &nbdb.ChassisTemplateVar{UUID: namedUUID("ctv", len(ops)), Chassis: ch, Variables: maps.Clone(vars),
			ExternalIDs: ovn.OwnedBy(ovn.KindNode, ch)}
		insert, err := c.nb.Create(row)
		if err != nil {
			return nil, fmt.Errorf("build insert of template variables of chassis %s: %w", ch, err)
		}
		ops = append(append(ops, ovn.WaitAbsent(nbdb.ChassisTemplateVarTable, "chassis", ch)), insert...)
	}
	return ops, nil
}

// varMutations are the deletions and insertions that turn the row's variables under prefix
// into want.
func varMutations(row *nbdb.ChassisTemplateVar, prefix string, want map[string]string) []ovsdb.Operation {
	del, ins := map[any]any{}, map[any]any{}
	for k, v := range row.Variables {
		if w, ok := want[k]; strings.HasPrefix(k, prefix) && (!ok || w != v) {
			del[k] = v
		}
	}
	for k, v := range want {
		if cur, ok := row.Variables[k]; !ok || cur != v {
			ins[k] = v
		}
	}
	var ms []ovsdb.Mutation
	if len(del) > 0 {
		ms = append(ms, *ovsdb.NewMutation("variables", ovsdb.MutateOperationDelete, ovsdb.OvsMap{GoMap: del}))
	}
	if len(ins) > 0 {
		ms = append(ms, *ovsdb.NewMutation("variables", ovsdb.MutateOperationInsert, ovsdb.OvsMap{GoMap: ins}))
	}
	if len(ms) == 0 {
		return nil
	}
	where := []ovsdb.Condition{ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: row.UUID})}
	// Deletions first: an insert does not replace a key that is still there.
	out := make([]ovsdb.Operation, 0, len(ms))
	for _, m := range ms {
		out = append(out, ovsdb.Operation{Op: ovsdb.OperationMutate, Table: nbdb.ChassisTemplateVarTable, Where: where, Mutations: []ovsdb.Mutation{m}})
	}
	return out
}

// DeleteTemplateVarRows deletes edgeovn's template variable rows of chassis not in keep
// (nodes that are gone); rows edgeovn did not create stay.
func (c *Client) DeleteTemplateVarRows(ctx context.Context, keep map[string]bool) (int, error) {
	var rows []*nbdb.ChassisTemplateVar
	if err := c.nb.List(ctx, &rows); err != nil {
		return 0, fmt.Errorf("read chassis template variables from cache: %w", err)
	}
	var ops []ovsdb.Operation
	for _, row := range rows {
		if ovn.IsOwned(row.ExternalIDs) && !keep[row.Chassis] {
			ops = append(ops, ovn.DeleteRow(nbdb.ChassisTemplateVarTable, row.UUID))
		}
	}
	if err := c.commit(ctx, ops); err != nil {
		return 0, fmt.Errorf("delete template variables of %d gone chassis: %w", len(ops), err)
	}
	return len(ops), nil
}
