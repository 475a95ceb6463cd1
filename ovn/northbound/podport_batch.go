package northbound

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// EnsurePodPorts is EnsurePodPort for many ports in one transaction (start-up, bulk
// re-sync): all are ensured or, if any is invalid or conflicts, none is. Names must be
// distinct. The new ports of each switch are added by one mutation, because the server
// rewrites the switch's whole ports set for every mutation.
func (c *Client) EnsurePodPorts(ctx context.Context, specs []PodPortSpec) error {
	ops, err := c.podPortsOps(ctx, specs)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure %d pod ports: %w", len(specs), err)
	}
	return nil
}

func (c *Client) podPortsOps(ctx context.Context, specs []PodPortSpec) ([]ovsdb.Operation, error) {
	var ops []ovsdb.Operation
	seen := make(map[string]bool, len(specs))
	// The cache does not change while the batch is built, so each switch is read once.
	switches := make(map[string]*nbdb.LogicalSwitch)
	for i, spec := range specs {
		if err := spec.Validate(); err != nil {
			return nil, err
		}
		if seen[spec.Name] {
			return nil, fmt.Errorf("%w: pod port %s listed twice", ovn.ErrInvalid, spec.Name)
		}
		seen[spec.Name] = true
		sw, ok := switches[spec.Switch]
		if !ok {
			var err error
			if sw, err = c.ownedSwitch(ctx, spec.Switch); err != nil {
				return nil, fmt.Errorf("pod port %s: %w", spec.Name, err)
			}
			switches[spec.Switch] = sw
		}
		more, err := c.podPortOpsOn(ctx, spec, fmt.Sprintf("new_pod_port_%d", i), sw)
		if err != nil {
			return nil, fmt.Errorf("pod port %s on switch %s: %w", spec.Name, spec.Switch, err)
		}
		ops = append(ops, more...)
	}
	return coalesceRefInserts(ops), nil
}

// coalesceRefInserts merges the mutations that insert references into the same row's
// column into one, placed after every other operation so that each named UUID it uses is
// already inserted; the other operations keep their order.
func coalesceRefInserts(ops []ovsdb.Operation) []ovsdb.Operation {
	type key struct{ table, uuid, column string }
	merged := make(map[key]*ovsdb.Operation)
	var order []key
	out := make([]ovsdb.Operation, 0, len(ops))
	for _, op := range ops {
		k, set, ok := refInsert(op)
		if !ok {
			out = append(out, op)
			continue
		}
		kk := key{op.Table, k, op.Mutations[0].Column}
		if m, ok := merged[kk]; ok {
			prev := m.Mutations[0].Value.(ovsdb.OvsSet)
			m.Mutations[0].Value = ovsdb.OvsSet{GoSet: append(slices.Clip(prev.GoSet), set.GoSet...)}
			continue
		}
		cp := op
		cp.Mutations = slices.Clone(op.Mutations)
		merged[kk] = &cp
		order = append(order, kk)
	}
	for _, k := range order {
		out = append(out, *merged[k])
	}
	return out
}

// refInsert recognizes what ovn.MutateRefs builds for an insert: the row's UUID and the set.
func refInsert(op ovsdb.Operation) (string, ovsdb.OvsSet, bool) {
	if op.Op != ovsdb.OperationMutate || len(op.Mutations) != 1 || len(op.Where) != 1 ||
		op.Mutations[0].Mutator != ovsdb.MutateOperationInsert || op.Where[0].Column != "_uuid" {
		return "", ovsdb.OvsSet{}, false
	}
	uuid, ok := op.Where[0].Value.(ovsdb.UUID)
	set, ok2 := op.Mutations[0].Value.(ovsdb.OvsSet)
	if !ok || !ok2 {
		return "", ovsdb.OvsSet{}, false
	}
	return uuid.GoUUID, set, true
}
