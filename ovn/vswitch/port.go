package vswitch

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// Interface external_ids keys shared with ovn-controller.
const (
	KeyIfaceID      = "iface-id"
	KeyOVNInstalled = "ovn-installed"
	// keyInstalledTS is written by ovn-controller beside ovn-installed.
	keyInstalledTS = "ovn-installed-ts"
)

// PortSpec is a port on a bridge whose interface ovn-controller binds to the logical switch
// port IfaceID.
type PortSpec struct {
	Bridge string
	Name   string // the kernel interface (the host end of a pod's veth, or ovn0)
	// Type is PortSystem for an interface that exists already (a pod's veth) or PortInternal
	// for one that ovs-vswitchd creates (the host's ovn0).
	Type        string
	IfaceID     string // the logical switch port, "<pod>.<namespace>" or "node-<node>"
	ExternalIDs map[string]string
	// MAC and MTU are for internal ports only, written to the interface's mac and mtu_request
	// columns so that ovs-vswitchd gives the kernel interface it creates the logical port's
	// address and keeps its MTU; nil and 0 leave the columns as they are.
	MAC net.HardwareAddr
	MTU int
	// QoS, when set (QoSTypeNoop), gives a port that AddPort creates its QoS row in the same
	// transaction: ovs-vswitchd then never sees the port without it (qos.go says why that
	// matters). A port that exists already keeps the QoS it has (SetPortQoS changes it).
	QoS string
}

// Port is an edgeovn port as the database has it.
type Port struct {
	Name        string
	IfaceID     string
	ExternalIDs map[string]string // the interface's external_ids
}

// Validate reports what is wrong with the spec.
func (s PortSpec) Validate() error {
	if err := validateIfaceName("bridge", s.Bridge); err != nil {
		return err
	}
	if err := validateIfaceName("port", s.Name); err != nil {
		return err
	}
	if s.IfaceID == "" || strings.ContainsAny(s.IfaceID, " \t\n\"") {
		return fmt.Errorf("%w: port %s: iface-id %q is empty or has whitespace or quotes", ovn.ErrInvalid, s.Name, s.IfaceID)
	}
	return s.validateType()
}

// interfaceIDs are the keys edgeovn sets on the interface; spec.ExternalIDs cannot override
// iface-id or the vendor tag.
func (s PortSpec) interfaceIDs() map[string]string {
	ids := maps.Clone(s.ExternalIDs)
	if ids == nil {
		ids = make(map[string]string)
	}
	ids[KeyIfaceID] = s.IfaceID
	ids[ovn.VendorKey] = ovn.Vendor
	return ids
}

// AddPort adds the port and its interface to the bridge in one transaction. If the port is
// already there with the same iface-id, tags, type, mac and mtu_request nothing is written;
// otherwise only what differs is changed: the interface's external_ids key-wise (dropping a
// stale ovn-installed when the iface-id changes) and its type, mac and mtu_request columns.
// For a system (pod) port, the same transaction deletes every other edgeovn port on the
// bridge whose interface has the same iface-id (see staleTwinOps), so that the bridge never
// holds two interfaces of one logical port. A same-named port not created by edgeovn is
// ovn.ErrNotOwned, one on another bridge ovn.ErrConflict.
func (c *Client) AddPort(ctx context.Context, spec PortSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("add port: %w", err)
	}
	ops, err := c.addPortOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("add port %s (iface-id %s) to bridge %s: %w", spec.Name, spec.IfaceID, spec.Bridge, err)
	}
	return nil
}

func (c *Client) addPortOps(ctx context.Context, spec PortSpec) ([]ovsdb.Operation, error) {
	br, err := c.ownedBridge(ctx, spec.Bridge)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return nil, fmt.Errorf("bridge %s: %w", spec.Bridge, ovn.ErrNotFound)
	}
	ops, err := c.ownPortOps(ctx, spec, br)
	if err != nil {
		return nil, err
	}
	if spec.Type == PortInternal {
		return ops, nil
	}
	twins, err := c.staleTwinOps(ctx, br, spec)
	if err != nil || len(twins) == 0 {
		return ops, err
	}
	if len(ops) == 0 {
		ops = []ovsdb.Operation{ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", br.Name)}
	}
	return append(ops, twins...), nil
}

// ownPortOps creates or updates spec's own port and interface.
func (c *Client) ownPortOps(ctx context.Context, spec PortSpec, br *vswitchdb.Bridge) ([]ovsdb.Operation, error) {
	port, err := c.portByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	if port == nil {
		return c.createPortOps(spec, br)
	}
	if !ovn.IsOwned(port.ExternalIDs) {
		return nil, fmt.Errorf("port %s: %w", spec.Name, ovn.ErrNotOwned)
	}
	if !slices.Contains(br.Ports, port.UUID) {
		return nil, fmt.Errorf("%w: port %s is on another bridge", ovn.ErrConflict, spec.Name)
	}
	iface, err := c.interfaceByName(ctx, spec.Name)
	if err != nil || iface == nil || !slices.Contains(port.Interfaces, iface.UUID) {
		return nil, fmt.Errorf("%w: port %s has no interface of its name (err %v)", ovn.ErrConflict, spec.Name, err)
	}
	return c.updateInterfaceOps(spec, iface)
}

func (c *Client) ownedBridge(ctx context.Context, name string) (*vswitchdb.Bridge, error) {
	br, err := c.bridgeByName(ctx, name)
	if err != nil || br == nil {
		return nil, err
	}
	if !ovn.IsOwned(br.ExternalIDs) {
		return nil, fmt.Errorf("bridge %s: %w", name, ovn.ErrNotOwned)
	}
	return br, nil
}

func (c *Client) createPortOps(spec PortSpec, br *vswitchdb.Bridge) ([]ovsdb.Operation, error) {
	iface := &vswitchdb.Interface{UUID: "new_iface", Name: spec.Name, Type: spec.Type, ExternalIDs: spec.interfaceIDs()}
	spec.setInternalColumns(iface)
	port := &vswitchdb.Port{UUID: "new_port", Name: spec.Name, Interfaces: []string{iface.UUID},
		ExternalIDs: map[string]string{ovn.VendorKey: ovn.Vendor}}
	rows := []model.Model{iface, port}
	if spec.QoS != "" {
		qos := qosRow(QoSSpec{Port: spec.Name, Type: spec.QoS}, iface)
		qos.UUID = "new_qos"
		port.QOS = &qos.UUID
		rows = append([]model.Model{qos}, rows...)
	}
	inserts, err := c.ovs.Create(rows...)
	if err != nil {
		return nil, fmt.Errorf("build port rows: %w", err)
	}
	ops := []ovsdb.Operation{
		ovn.WaitAbsent(vswitchdb.PortTable, "name", spec.Name),
		ovn.WaitAbsent(vswitchdb.InterfaceTable, "name", spec.Name),
		ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", br.Name),
	}
	ops = append(ops, inserts...)
	return append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationInsert, port.UUID)), nil
}

func (c *Client) updateInterfaceOps(spec PortSpec, iface *vswitchdb.Interface) ([]ovsdb.Operation, error) {
	var ops []ovsdb.Operation
	if want := spec.interfaceIDs(); !ovn.HasAll(iface.ExternalIDs, want) {
		var drop []string
		if iface.ExternalIDs[KeyIfaceID] != spec.IfaceID {
			// ovn-installed was about the old logical port.
			drop = []string{KeyOVNInstalled, keyInstalledTS}
		}
		ops = append(ops, setKeys(vswitchdb.InterfaceTable, iface.UUID, "external_ids", want, drop))
	}
	cols, err := c.interfaceColumnOps(spec, iface)
	if err != nil {
		return nil, err
	}
	ops = append(ops, cols...)
	if len(ops) == 0 {
		return nil, nil
	}
	return append([]ovsdb.Operation{ovn.WaitPresent(vswitchdb.InterfaceTable, iface.UUID, "name", iface.Name)}, ops...), nil
}

// DeletePort removes the port (and so its interface, and the QoS row SetPortQoS gave it)
// from the bridge. A missing bridge or
// port, or a port on another bridge, is success; a port not created by edgeovn is
// ovn.ErrNotOwned.
func (c *Client) DeletePort(ctx context.Context, bridge, name string) error {
	ops, err := c.deletePortOps(ctx, bridge, name)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("delete port %s from bridge %s: %w", name, bridge, err)
	}
	return nil
}

func (c *Client) deletePortOps(ctx context.Context, bridge, name string) ([]ovsdb.Operation, error) {
	if err := validateIfaceName("bridge", bridge); err != nil {
		return nil, err
	}
	if err := validateIfaceName("port", name); err != nil {
		return nil, err
	}
	port, err := c.portByName(ctx, name)
	if err != nil || port == nil {
		return nil, err
	}
	if !ovn.IsOwned(port.ExternalIDs) {
		return nil, fmt.Errorf("port %s: %w", name, ovn.ErrNotOwned)
	}
	br, err := c.bridgeByName(ctx, bridge)
	if err != nil || br == nil || !slices.Contains(br.Ports, port.UUID) {
		return nil, err
	}
	ops := []ovsdb.Operation{
		ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationDelete, port.UUID),
		ovn.DeleteRow(vswitchdb.PortTable, port.UUID),
	}
	return append(ops, c.ownedQoSDelete(ctx, port)...), nil
}

// Ports lists the edgeovn system ports on bridge that carry an iface-id (so not the bridge's
// own internal port, nor the host's ovn0), sorted by name. A missing bridge has none.
func (c *Client) Ports(ctx context.Context, bridge string) ([]Port, error) {
	_, owned, err := c.podPorts(ctx, bridge)
	out := make([]Port, len(owned))
	for i, p := range owned {
		out[i] = p.Port
	}
	return out, err
}

// podPort is an edgeovn pod port with the row it was read from.
type podPort struct {
	Port
	row *vswitchdb.Port
}

// podPorts returns the bridge and its edgeovn ports that carry an iface-id, sorted by name:
// never a foreign port, never the bridge's own internal port (which has no iface-id, and
// is skipped by name as well), and never another internal port (the host's ovn0 has an
// iface-id but is no pod's, so a pod GC must not see it). A missing bridge is nil with no ports.
func (c *Client) podPorts(ctx context.Context, bridge string) (*vswitchdb.Bridge, []podPort, error) {
	br, err := c.bridgeByName(ctx, bridge)
	if err != nil || br == nil {
		return nil, nil, err
	}
	var out []podPort
	for _, uuid := range br.Ports {
		p := &vswitchdb.Port{UUID: uuid}
		if err := c.ovs.Get(ctx, p); err != nil || !ovn.IsOwned(p.ExternalIDs) || len(p.Interfaces) == 0 || p.Name == bridge {
			continue
		}
		iface := &vswitchdb.Interface{UUID: p.Interfaces[0]}
		if err := c.ovs.Get(ctx, iface); err != nil || iface.ExternalIDs[KeyIfaceID] == "" || iface.Type == PortInternal {
			continue
		}
		out = append(out, podPort{
			Port: Port{Name: p.Name, IfaceID: iface.ExternalIDs[KeyIfaceID], ExternalIDs: maps.Clone(iface.ExternalIDs)},
			row:  p,
		})
	}
	slices.SortFunc(out, func(a, b podPort) int { return strings.Compare(a.Name, b.Name) })
	return br, out, nil
}
