package vswitch

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// QoS type and key of the Open_vSwitch schema that SetPortQoS writes.
const (
	// QoSTypeNoop tells ovs-vswitchd to leave the port's kernel queueing discipline alone:
	// without a QoS row it resets the device's root qdisc when it (re)starts, which would
	// drop the shaping edgeovn puts there (agent/podqos).
	QoSTypeNoop = "linux-noop"
	// KeyQoSPort names, on a QoS row, the port it was made for.
	KeyQoSPort = "port"
)

// QoSSpec is the QoS row edgeovn wants on one of its ports.
type QoSSpec struct {
	Port string // the port and its interface, as given to AddPort
	// Type is the QoS row's type: QoSTypeNoop, or "" for no row. OVS's own shapers
	// (linux-htb) and Interface policing are not offered: policing needs the kernel's
	// act_police, which hosts of this kind lack, and does nothing there but log (docs/qos.md).
	Type string
}

// Validate reports what is wrong with the spec.
func (s QoSSpec) Validate() error {
	if err := validateIfaceName("port", s.Port); err != nil {
		return err
	}
	if s.Type != "" && s.Type != QoSTypeNoop {
		return fmt.Errorf("%w: port %s: qos type %q (want %q or none)", ovn.ErrInvalid, s.Port, s.Type, QoSTypeNoop)
	}
	return nil
}

// SetPortQoS makes the port's QoS row the one spec asks for: it creates, updates or deletes
// the port's QoS row (tagged as edgeovn's) in one transaction. When everything already
// matches nothing is written. The port must be edgeovn's (ovn.ErrNotFound, ovn.ErrNotOwned),
// and a QoS row on it that edgeovn did not create is left alone (ovn.ErrNotOwned).
func (c *Client) SetPortQoS(ctx context.Context, spec QoSSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("set port qos: %w", err)
	}
	ops, err := c.portQoSOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("set qos of port %s: %w", spec.Port, err)
	}
	return nil
}

func (c *Client) portQoSOps(ctx context.Context, spec QoSSpec) ([]ovsdb.Operation, error) {
	port, iface, err := c.ownedPortAndInterface(ctx, spec.Port)
	if err != nil {
		return nil, err
	}
	qos, err := c.portQoSRow(ctx, port)
	if err != nil {
		return nil, err
	}
	return c.qosRowOps(spec, port, iface, qos)
}

// ownedPortAndInterface returns edgeovn's port name and its interface of the same name.
func (c *Client) ownedPortAndInterface(ctx context.Context, name string) (*vswitchdb.Port, *vswitchdb.Interface, error) {
	port, err := c.portByName(ctx, name)
	switch {
	case err != nil:
		return nil, nil, err
	case port == nil:
		return nil, nil, fmt.Errorf("port %s: %w", name, ovn.ErrNotFound)
	case !ovn.IsOwned(port.ExternalIDs):
		return nil, nil, fmt.Errorf("port %s: %w", name, ovn.ErrNotOwned)
	}
	iface, err := c.interfaceByName(ctx, name)
	if err != nil || iface == nil || !slices.Contains(port.Interfaces, iface.UUID) {
		return nil, nil, fmt.Errorf("%w: port %s has no interface of its name (err %v)", ovn.ErrConflict, name, err)
	}
	return port, iface, nil
}

// portQoSRow returns the port's QoS row, nil when it has none, and ovn.ErrNotOwned when the
// row is not edgeovn's.
func (c *Client) portQoSRow(ctx context.Context, port *vswitchdb.Port) (*vswitchdb.QoS, error) {
	if port.QOS == nil {
		return nil, nil
	}
	qos, err := lookup(ctx, c, &vswitchdb.QoS{UUID: *port.QOS}, "qos")
	if err != nil || qos == nil {
		return nil, err
	}
	if !ovn.IsOwned(qos.ExternalIDs) {
		return nil, fmt.Errorf("qos %s of port %s: %w", qos.UUID, port.Name, ovn.ErrNotOwned)
	}
	return qos, nil
}

func (c *Client) qosRowOps(spec QoSSpec, port *vswitchdb.Port, iface *vswitchdb.Interface, qos *vswitchdb.QoS) ([]ovsdb.Operation, error) {
	portGuard := ovn.WaitPresent(vswitchdb.PortTable, port.UUID, "name", port.Name)
	switch {
	case spec.Type == "" && qos == nil:
		return nil, nil
	case spec.Type == "":
		return []ovsdb.Operation{portGuard,
			ovn.MutateRefs(vswitchdb.PortTable, port.UUID, "qos", ovsdb.MutateOperationDelete, qos.UUID),
			ovn.DeleteRow(vswitchdb.QoSTable, qos.UUID)}, nil
	case qos == nil:
		row := qosRow(spec, iface)
		row.UUID = "new_qos"
		insert, err := c.ovs.Create(row)
		if err != nil {
			return nil, fmt.Errorf("build qos row: %w", err)
		}
		// The port must still have no QoS: a row set by someone else since the cache was
		// read turns into ErrConflict rather than a constraint violation or a takeover.
		noQoS := ovn.WaitPresent(vswitchdb.PortTable, port.UUID, "qos", ovsdb.OvsSet{GoSet: []any{}})
		ops := append([]ovsdb.Operation{portGuard, noQoS}, insert...)
		return append(ops, ovn.MutateRefs(vswitchdb.PortTable, port.UUID, "qos", ovsdb.MutateOperationInsert, row.UUID)), nil
	}
	want := qosRow(spec, iface)
	if qos.Type == want.Type && len(qos.OtherConfig) == 0 && ovn.HasAll(qos.ExternalIDs, want.ExternalIDs) {
		return nil, nil
	}
	want.UUID = qos.UUID
	want.ExternalIDs = merged(qos.ExternalIDs, want.ExternalIDs)
	upd, err := c.ovs.Where(want).Update(want, &want.Type, &want.OtherConfig, &want.ExternalIDs)
	if err != nil {
		return nil, fmt.Errorf("build qos update: %w", err)
	}
	return append([]ovsdb.Operation{portGuard}, upd...), nil
}

// qosRow is the desired QoS row, tagged with the port and the logical port it limits.
func qosRow(spec QoSSpec, iface *vswitchdb.Interface) *vswitchdb.QoS {
	ids := map[string]string{ovn.VendorKey: ovn.Vendor, KeyQoSPort: spec.Port}
	if id := iface.ExternalIDs[KeyIfaceID]; id != "" {
		ids[KeyIfaceID] = id
	}
	return &vswitchdb.QoS{Type: spec.Type, OtherConfig: map[string]string{}, ExternalIDs: ids}
}

// ownedQoSDelete deletes the port's QoS row when edgeovn made it: QoS is a root table, so
// the row would outlive its port otherwise.
func (c *Client) ownedQoSDelete(ctx context.Context, port *vswitchdb.Port) []ovsdb.Operation {
	qos, err := c.portQoSRow(ctx, port)
	if err != nil || qos == nil {
		return nil
	}
	return []ovsdb.Operation{ovn.DeleteRow(vswitchdb.QoSTable, qos.UUID)}
}

// PortQoSType returns the type of edgeovn's QoS row on the port, "" when it has none (or
// the port is gone); ovn.ErrNotOwned when the row is not edgeovn's. Read from the cache.
func (c *Client) PortQoSType(ctx context.Context, name string) (string, error) {
	port, err := c.portByName(ctx, name)
	if err != nil || port == nil {
		return "", err
	}
	qos, err := c.portQoSRow(ctx, port)
	if err != nil || qos == nil {
		return "", err
	}
	return qos.Type, nil
}

// AnyOwnedQoS says whether any QoS row is edgeovn's: none means no pod port is shaped (a
// port's row, once made, stays with it). Read from the cache, whose QoS rows are the few
// shaped ports'.
func (c *Client) AnyOwnedQoS(ctx context.Context) (bool, error) {
	var rows []vswitchdb.QoS
	if err := c.ovs.List(ctx, &rows); err != nil {
		return false, fmt.Errorf("read qos rows from cache: %w", err)
	}
	return slices.ContainsFunc(rows, func(q vswitchdb.QoS) bool { return ovn.IsOwned(q.ExternalIDs) }), nil
}
