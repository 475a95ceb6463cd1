package northbound

import (
	"context"
	"fmt"
	"maps"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// EnsurePodPort creates the pod's port on spec.Switch, or updates it when its addresses,
// port security or tags differ, or moves it when it is on another switch. A port that is
// already right is not written. The switch must exist (ovn.ErrNotFound) and be edgeovn's,
// and a same-named port that is not an edgeovn pod port is left alone (ovn.ErrNotOwned).
// Concurrent calls share transactions (podport_group.go); each gets its own port's result.
func (c *Client) EnsurePodPort(ctx context.Context, spec PodPortSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("ensure pod port: %w", err)
	}
	return c.ensureGrouped(ctx, spec)
}

// ensureAlone is EnsurePodPort in a transaction of its own.
func (c *Client) ensureAlone(ctx context.Context, spec PodPortSpec) error {
	ops, err := c.podPortOps(ctx, spec, "new_pod_port")
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure pod port %s on switch %s: %w", spec.Name, spec.Switch, err)
	}
	return nil
}

func (c *Client) podPortOps(ctx context.Context, spec PodPortSpec, ref string) ([]ovsdb.Operation, error) {
	sw, err := c.ownedSwitch(ctx, spec.Switch)
	if err != nil {
		return nil, err
	}
	return c.podPortOpsOn(ctx, spec, ref, sw)
}

// ownedSwitch returns the switch name, which must exist and be edgeovn's.
func (c *Client) ownedSwitch(ctx context.Context, name string) (*nbdb.LogicalSwitch, error) {
	sw, err := c.switchByName(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case sw == nil:
		return nil, fmt.Errorf("logical switch %s: %w", name, ovn.ErrNotFound)
	case !ovn.IsOwned(sw.ExternalIDs):
		return nil, fmt.Errorf("logical switch %s: %w", name, ovn.ErrNotOwned)
	}
	return sw, nil
}

func (c *Client) podPortOpsOn(ctx context.Context, spec PodPortSpec, ref string, sw *nbdb.LogicalSwitch) ([]ovsdb.Operation, error) {
	cur, err := c.switchPortByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return c.createPodPortOps(spec, sw, ref)
	}
	if !isPodPort(cur) {
		return nil, fmt.Errorf("logical switch port %s (not an edgeovn pod port): %w", spec.Name, ovn.ErrNotOwned)
	}
	return c.repairPodPortOps(ctx, spec, sw, cur)
}

func (c *Client) createPodPortOps(spec PodPortSpec, sw *nbdb.LogicalSwitch, ref string) ([]ovsdb.Operation, error) {
	lsp := &nbdb.LogicalSwitchPort{
		UUID:         ref,
		Name:         spec.Name,
		Addresses:    []string{spec.addresses()},
		PortSecurity: spec.portSecurity(),
		ExternalIDs:  spec.externalIDs(),
		Options:      spec.options(),
	}
	insert, err := c.nb.Create(lsp)
	if err != nil {
		return nil, fmt.Errorf("build logical switch port: %w", err)
	}
	// No WaitAbsent on the name: the schema's unique name index already fails a duplicate
	// (ErrConflict), and a wait on a non-_uuid column is a table scan on the server.
	ops := []ovsdb.Operation{
		ovn.WaitPresent(nbdb.LogicalSwitchTable, sw.UUID, "name", sw.Name),
	}
	ops = append(ops, insert...)
	return append(ops, ovn.MutateRefs(nbdb.LogicalSwitchTable, sw.UUID, "ports", ovsdb.MutateOperationInsert, lsp.UUID)), nil
}

// repairPodPortOps updates an existing edgeovn pod port in place, keeping its UUID (and so
// its binding) and moving it between switches by mutating both in one transaction, so it is
// referenced at every commit and never garbage-collected.
func (c *Client) repairPodPortOps(ctx context.Context, spec PodPortSpec, sw *nbdb.LogicalSwitch, cur *nbdb.LogicalSwitchPort) ([]ovsdb.Operation, error) {
	holders, err := c.switchesHolding(ctx, cur.UUID)
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	held := false
	for _, h := range holders {
		if h.UUID == sw.UUID {
			held = true
			continue
		}
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalSwitchTable, h.UUID, "ports", ovsdb.MutateOperationDelete, cur.UUID))
	}
	if !held {
		ops = append(ops,
			ovn.WaitPresent(nbdb.LogicalSwitchTable, sw.UUID, "name", sw.Name),
			ovn.MutateRefs(nbdb.LogicalSwitchTable, sw.UUID, "ports", ovsdb.MutateOperationInsert, cur.UUID))
	}
	want, security := []string{spec.addresses()}, spec.portSecurity()
	ids := spec.wantExternalIDs(cur.ExternalIDs)
	if !sameSet(cur.Addresses, want) || !sameSet(cur.PortSecurity, security) || !maps.Equal(cur.ExternalIDs, ids) ||
		!ovn.HasAll(cur.Options, spec.options()) {
		m := &nbdb.LogicalSwitchPort{
			UUID:         cur.UUID,
			Addresses:    want,
			PortSecurity: security,
			ExternalIDs:  ids,
			Options:      merged(cur.Options, spec.options()),
		}
		upd, err := c.nb.Where(m).Update(m, &m.Addresses, &m.PortSecurity, &m.ExternalIDs, &m.Options)
		if err != nil {
			return nil, fmt.Errorf("build update of logical switch port: %w", err)
		}
		ops = append(ops, upd...)
	}
	if len(ops) == 0 {
		return nil, nil
	}
	guard := ovn.WaitPresent(nbdb.LogicalSwitchPortTable, cur.UUID, "name", cur.Name)
	return append([]ovsdb.Operation{guard}, ops...), nil
}

// DeletePodPort removes the pod port portName from switchName. A missing switch or port, or
// a port that now lives on another switch (the pod was re-created elsewhere), is success. A
// same-named port that is not an edgeovn pod port is ovn.ErrNotOwned.
func (c *Client) DeletePodPort(ctx context.Context, switchName, portName string) error {
	ops, err := c.deletePodPortOps(ctx, switchName, portName)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("delete pod port %s from switch %s: %w", portName, switchName, err)
	}
	return nil
}

func (c *Client) deletePodPortOps(ctx context.Context, switchName, portName string) ([]ovsdb.Operation, error) {
	if err := validateName("logical switch", switchName); err != nil {
		return nil, err
	}
	if err := validateName("pod port", portName); err != nil {
		return nil, err
	}
	cur, err := c.switchPortByName(ctx, portName)
	if err != nil || cur == nil {
		return nil, err
	}
	if !isPodPort(cur) {
		return nil, fmt.Errorf("logical switch port %s (not an edgeovn pod port): %w", portName, ovn.ErrNotOwned)
	}
	sw, err := c.switchByName(ctx, switchName)
	if err != nil || sw == nil || !c.ports.holds(sw, cur.UUID) {
		if err == nil {
			c.log.Debug("pod port not on this switch, nothing to delete", "lsp", portName, "ls", switchName)
		}
		return nil, err
	}
	return []ovsdb.Operation{
		ovn.MutateRefs(nbdb.LogicalSwitchTable, sw.UUID, "ports", ovsdb.MutateOperationDelete, cur.UUID),
		ovn.DeleteRow(nbdb.LogicalSwitchPortTable, cur.UUID),
	}, nil
}

func isPodPort(lsp *nbdb.LogicalSwitchPort) bool {
	return ovn.IsOwned(lsp.ExternalIDs) && lsp.ExternalIDs[ovn.OwnerKindKey] == ovn.KindPod
}
