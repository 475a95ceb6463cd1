package vswitch

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// QoS types and keys of the Open_vSwitch schema that SetPortQoS writes.
const (
	QoSTypeHTB = "linux-htb"
	KeyMaxRate = "max-rate"
	// KeyQoSPort names, on a QoS row, the port it was made for.
	KeyQoSPort = "port"
)

// QoSSpec is the rate limiting of one edgeovn port, in OVS's terms: OVS receives what the pod
// sends, and sends what the pod receives. Zero values mean no limit.
type QoSSpec struct {
	Port string // the port and its interface, as given to AddPort
	// IngressPolicingRate (kbit/s) and IngressPolicingBurst (kbit) police what OVS receives
	// from the interface, that is the pod's egress (Interface ingress_policing_*). A zero
	// burst lets OVS pick its default.
	IngressPolicingRate  int
	IngressPolicingBurst int
	// MaxRate (bit/s) shapes what OVS sends to the interface, the pod's ingress, with a
	// linux-htb QoS row on the port. The userspace (netdev) datapath applies linux-htb only to
	// interfaces backed by the kernel (veth, tap), which is what pod ports are.
	MaxRate int64
}

// Validate reports what is wrong with the spec.
func (s QoSSpec) Validate() error {
	if err := validateIfaceName("port", s.Port); err != nil {
		return err
	}
	switch {
	case s.IngressPolicingRate < 0 || s.IngressPolicingBurst < 0 || s.MaxRate < 0:
		return fmt.Errorf("%w: port %s: negative rate or burst in %+v", ovn.ErrInvalid, s.Port, s)
	case s.IngressPolicingBurst > 0 && s.IngressPolicingRate == 0:
		return fmt.Errorf("%w: port %s: policing burst %d kbit without a rate", ovn.ErrInvalid, s.Port, s.IngressPolicingBurst)
	}
	return nil
}

// SetPortQoS makes the port's rate limits those of spec: it sets or clears the interface's
// policing and creates, updates or deletes the port's linux-htb QoS row (tagged as
// edgeovn's), all in one transaction. When everything already matches nothing is written; a
// zero spec removes every limit. The port must be edgeovn's (ovn.ErrNotFound,
// ovn.ErrNotOwned), and a QoS row on it that edgeovn did not create is left alone
// (ovn.ErrNotOwned).
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
	ops, err := c.policingOps(spec, iface)
	if err != nil {
		return nil, err
	}
	qos, err := c.portQoSRow(ctx, port)
	if err != nil {
		return nil, err
	}
	shaping, err := c.shapingOps(spec, port, iface, qos)
	if err != nil {
		return nil, err
	}
	return append(ops, shaping...), nil
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

func (c *Client) policingOps(spec QoSSpec, iface *vswitchdb.Interface) ([]ovsdb.Operation, error) {
	if iface.IngressPolicingRate == spec.IngressPolicingRate && iface.IngressPolicingBurst == spec.IngressPolicingBurst {
		return nil, nil
	}
	m := &vswitchdb.Interface{UUID: iface.UUID, IngressPolicingRate: spec.IngressPolicingRate,
		IngressPolicingBurst: spec.IngressPolicingBurst}
	upd, err := c.ovs.Where(m).Update(m, &m.IngressPolicingRate, &m.IngressPolicingBurst)
	if err != nil {
		return nil, fmt.Errorf("build policing update: %w", err)
	}
	return append([]ovsdb.Operation{ovn.WaitPresent(vswitchdb.InterfaceTable, iface.UUID, "name", iface.Name)}, upd...), nil
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

func (c *Client) shapingOps(spec QoSSpec, port *vswitchdb.Port, iface *vswitchdb.Interface, qos *vswitchdb.QoS) ([]ovsdb.Operation, error) {
	portGuard := ovn.WaitPresent(vswitchdb.PortTable, port.UUID, "name", port.Name)
	switch {
	case spec.MaxRate == 0 && qos == nil:
		return nil, nil
	case spec.MaxRate == 0:
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
	if qos.Type == want.Type && ovn.HasAll(qos.OtherConfig, want.OtherConfig) && ovn.HasAll(qos.ExternalIDs, want.ExternalIDs) {
		return nil, nil
	}
	want.UUID = qos.UUID
	want.OtherConfig = merged(qos.OtherConfig, want.OtherConfig)
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
	return &vswitchdb.QoS{
		Type:        QoSTypeHTB,
		OtherConfig: map[string]string{KeyMaxRate: strconv.FormatInt(spec.MaxRate, 10)},
		ExternalIDs: ids,
	}
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
