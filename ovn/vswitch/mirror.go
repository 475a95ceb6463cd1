package vswitch

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// DefaultMirrorName is Kube-OVN's name for its Mirror row ("m0").
const DefaultMirrorName = "m0"

// KeyMirror names, on the mirror's output port, the Mirror row it serves.
const KeyMirror = "edgeovn-mirror"

// MirrorSpec is edgeovn's mirror on a bridge: what it selects and the internal port it copies
// to (created with it).
type MirrorSpec struct {
	Bridge string
	Name   string // the Mirror row's name
	Output string // the internal port (and kernel device) the mirrored packets go out of
	// All selects every packet on the bridge (select_all), as Kube-OVN's --enable-mirror.
	All bool
	// Ports are the ports whose packets are selected in both directions (select_src_port and
	// select_dst_port); a name with no port on the bridge is skipped (its pod is not wired
	// yet). Ignored when All is set.
	Ports []string
}

// Validate reports what is wrong with the spec.
func (s MirrorSpec) Validate() error {
	if err := validateIfaceName("bridge", s.Bridge); err != nil {
		return err
	}
	if err := validateIfaceName("mirror output", s.Output); err != nil {
		return err
	}
	if s.Name == "" {
		return fmt.Errorf("%w: empty mirror name", ovn.ErrInvalid)
	}
	if s.Output == s.Bridge {
		return fmt.Errorf("%w: mirror output %s is the bridge's own port", ovn.ErrInvalid, s.Output)
	}
	return nil
}

// SetMirror makes the bridge's mirror spec.Name what spec says, in one transaction: it creates
// the output port (type internal, tagged as edgeovn's, no iface-id: ovn-controller leaves it
// alone) and the Mirror row when missing, and otherwise changes only the selection columns
// that differ; nothing is written when all is right. ovs-vswitchd revalidates its datapath
// flows on the change, so flows already running are mirrored (or not) from then on.
// An output port or Mirror row of that name that is not edgeovn's is ovn.ErrNotOwned, and an
// edgeovn port that is not a mirror output (a pod's port, ovn0) ovn.ErrConflict: nothing is
// written then.
func (c *Client) SetMirror(ctx context.Context, spec MirrorSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("set mirror: %w", err)
	}
	ops, err := c.mirrorOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("set mirror %s to %s on bridge %s: %w", spec.Name, spec.Output, spec.Bridge, err)
	}
	return nil
}

func (c *Client) mirrorOps(ctx context.Context, spec MirrorSpec) ([]ovsdb.Operation, error) {
	br, err := c.ownedBridge(ctx, spec.Bridge)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return nil, fmt.Errorf("bridge %s: %w", spec.Bridge, ovn.ErrNotFound)
	}
	outUUID, ops, err := c.mirrorOutputOps(ctx, spec, br)
	if err != nil {
		return nil, err
	}
	selected, err := c.portUUIDs(ctx, br, spec)
	if err != nil {
		return nil, err
	}
	mirror, err := c.mirrorByName(ctx, br, spec.Name)
	if err != nil {
		return nil, err
	}
	want := &vswitchdb.Mirror{Name: spec.Name, OutputPort: &outUUID, SelectAll: spec.All,
		SelectSrcPort: selected, SelectDstPort: selected, ExternalIDs: map[string]string{ovn.VendorKey: ovn.Vendor}}
	if mirror == nil {
		want.UUID = "new_mirror"
		insert, err := c.ovs.Create(want)
		if err != nil {
			return nil, fmt.Errorf("build mirror row: %w", err)
		}
		ops = append(ops, ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", br.Name))
		ops = append(ops, insert...)
		return append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "mirrors", ovsdb.MutateOperationInsert, want.UUID)), nil
	}
	upd, err := c.mirrorUpdateOps(mirror, want)
	return append(ops, upd...), err
}

// mirrorOutputOps returns the output port's UUID (a named UUID when it is created in ops).
func (c *Client) mirrorOutputOps(ctx context.Context, spec MirrorSpec, br *vswitchdb.Bridge) (string, []ovsdb.Operation, error) {
	port, err := c.portByName(ctx, spec.Output)
	if err != nil {
		return "", nil, err
	}
	if port == nil {
		return c.createMirrorOutputOps(ctx, spec, br)
	}
	if !ovn.IsOwned(port.ExternalIDs) {
		return "", nil, fmt.Errorf("mirror output %s: a port of that name is not edgeovn's: %w", spec.Output, ovn.ErrNotOwned)
	}
	if port.ExternalIDs[KeyMirror] != spec.Name || !slices.Contains(br.Ports, port.UUID) {
		return "", nil, fmt.Errorf("%w: mirror output %s: edgeovn's port of that name is not mirror %s's output on %s",
			ovn.ErrConflict, spec.Output, spec.Name, spec.Bridge)
	}
	return port.UUID, nil, nil
}

func (c *Client) createMirrorOutputOps(ctx context.Context, spec MirrorSpec, br *vswitchdb.Bridge) (string, []ovsdb.Operation, error) {
	iface, err := c.interfaceByName(ctx, spec.Output)
	if err != nil {
		return "", nil, err
	}
	if iface != nil {
		return "", nil, fmt.Errorf("mirror output %s: an interface of that name exists: %w", spec.Output, ovn.ErrNotOwned)
	}
	ids := map[string]string{ovn.VendorKey: ovn.Vendor, KeyMirror: spec.Name}
	newIface := &vswitchdb.Interface{UUID: "new_mirror_iface", Name: spec.Output, Type: PortInternal, ExternalIDs: ids}
	newPort := &vswitchdb.Port{UUID: "new_mirror_port", Name: spec.Output, Interfaces: []string{newIface.UUID}, ExternalIDs: ids}
	inserts, err := c.ovs.Create(newIface, newPort)
	if err != nil {
		return "", nil, fmt.Errorf("build mirror output rows: %w", err)
	}
	ops := []ovsdb.Operation{
		ovn.WaitAbsent(vswitchdb.PortTable, "name", spec.Output),
		ovn.WaitAbsent(vswitchdb.InterfaceTable, "name", spec.Output),
		ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", br.Name),
	}
	ops = append(ops, inserts...)
	ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationInsert, newPort.UUID))
	return newPort.UUID, ops, nil
}

// portUUIDs are the UUIDs of spec.Ports that are on the bridge, sorted.
func (c *Client) portUUIDs(ctx context.Context, br *vswitchdb.Bridge, spec MirrorSpec) ([]string, error) {
	if spec.All {
		return []string{}, nil
	}
	out := []string{}
	for _, name := range spec.Ports {
		p, err := c.portByName(ctx, name)
		if err != nil {
			return nil, err
		}
		if p != nil && slices.Contains(br.Ports, p.UUID) && name != spec.Output {
			out = append(out, p.UUID)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// mirrorByName is the bridge's Mirror row of that name, nil when none; one not tagged as
// edgeovn's is ovn.ErrNotOwned.
func (c *Client) mirrorByName(ctx context.Context, br *vswitchdb.Bridge, name string) (*vswitchdb.Mirror, error) {
	for _, uuid := range br.Mirrors {
		m := &vswitchdb.Mirror{UUID: uuid}
		if err := c.ovs.Get(ctx, m); err != nil {
			return nil, fmt.Errorf("read mirror %s from cache: %w", uuid, err)
		}
		if m.Name != name {
			continue
		}
		if !ovn.IsOwned(m.ExternalIDs) {
			return nil, fmt.Errorf("mirror %s on %s: %w", name, br.Name, ovn.ErrNotOwned)
		}
		return m, nil
	}
	return nil, nil
}

func (c *Client) mirrorUpdateOps(have, want *vswitchdb.Mirror) ([]ovsdb.Operation, error) {
	want.UUID = have.UUID
	var fields []any
	if have.OutputPort == nil || *have.OutputPort != *want.OutputPort {
		fields = append(fields, &want.OutputPort)
	}
	if have.SelectAll != want.SelectAll {
		fields = append(fields, &want.SelectAll)
	}
	if !sameSet(have.SelectSrcPort, want.SelectSrcPort) {
		fields = append(fields, &want.SelectSrcPort)
	}
	if !sameSet(have.SelectDstPort, want.SelectDstPort) {
		fields = append(fields, &want.SelectDstPort)
	}
	if len(fields) == 0 {
		return nil, nil
	}
	ops, err := c.ovs.Where(want).Update(want, fields...)
	if err != nil {
		return nil, fmt.Errorf("build mirror %s update: %w", want.Name, err)
	}
	return append([]ovsdb.Operation{ovn.WaitPresent(vswitchdb.MirrorTable, have.UUID, "name", have.Name)}, ops...), nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// DeleteMirror removes edgeovn's mirror name from the bridge and its output port, in one
// transaction (the Mirror row goes with the bridge's reference to it). Nothing there is
// success; a mirror or output port of that name that is not edgeovn's is left alone.
func (c *Client) DeleteMirror(ctx context.Context, spec MirrorSpec) error {
	ops, err := c.deleteMirrorOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("delete mirror %s from bridge %s: %w", spec.Name, spec.Bridge, err)
	}
	return nil
}

func (c *Client) deleteMirrorOps(ctx context.Context, spec MirrorSpec) ([]ovsdb.Operation, error) {
	br, err := c.bridgeByName(ctx, spec.Bridge)
	if err != nil || br == nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	if m, err := c.mirrorByName(ctx, br, spec.Name); err == nil && m != nil {
		ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "mirrors", ovsdb.MutateOperationDelete, m.UUID))
	}
	port, err := c.portByName(ctx, spec.Output)
	if err != nil {
		return nil, err
	}
	if port != nil && ovn.IsOwned(port.ExternalIDs) && port.ExternalIDs[KeyMirror] == spec.Name && slices.Contains(br.Ports, port.UUID) {
		ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationDelete, port.UUID),
			ovn.DeleteRow(vswitchdb.PortTable, port.UUID))
	}
	return ops, nil
}

// MirrorOutputOwned reports whether name is edgeovn's mirror output port (so a kernel device
// of that name is edgeovn's to use).
func (c *Client) MirrorOutputOwned(ctx context.Context, name string) (bool, error) {
	p, err := c.portByName(ctx, name)
	if err != nil || p == nil {
		return false, err
	}
	return ovn.IsOwned(p.ExternalIDs) && p.ExternalIDs[KeyMirror] != "", nil
}

// MirrorOutputs lists edgeovn's mirror output ports on the bridge (edgeovn cleanup).
func (c *Client) MirrorOutputs(ctx context.Context, bridge string) ([]string, error) {
	br, err := c.bridgeByName(ctx, bridge)
	if err != nil || br == nil {
		return nil, err
	}
	var out []string
	for _, uuid := range br.Ports {
		p := &vswitchdb.Port{UUID: uuid}
		if err := c.ovs.Get(ctx, p); err == nil && ovn.IsOwned(p.ExternalIDs) && p.ExternalIDs[KeyMirror] != "" {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// DeleteMirrors removes every edgeovn mirror of the bridge and its output port, in one
// transaction (edgeovn cleanup); mirrors and ports of others are kept.
func (c *Client) DeleteMirrors(ctx context.Context, bridge string) error {
	outputs, err := c.MirrorOutputs(ctx, bridge)
	if err != nil {
		return fmt.Errorf("delete mirrors of bridge %s: %w", bridge, err)
	}
	br, err := c.bridgeByName(ctx, bridge)
	if err != nil || br == nil {
		return err
	}
	var ops []ovsdb.Operation
	for _, uuid := range br.Mirrors {
		m := &vswitchdb.Mirror{UUID: uuid}
		if err := c.ovs.Get(ctx, m); err == nil && ovn.IsOwned(m.ExternalIDs) {
			ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "mirrors", ovsdb.MutateOperationDelete, m.UUID))
		}
	}
	for _, name := range outputs {
		if p, err := c.portByName(ctx, name); err == nil && p != nil {
			ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationDelete, p.UUID),
				ovn.DeleteRow(vswitchdb.PortTable, p.UUID))
		}
	}
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("delete mirrors of bridge %s: %w", bridge, err)
	}
	return nil
}
