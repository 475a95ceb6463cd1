package vswitch

import (
	"fmt"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// Port types.
const (
	// PortSystem is an interface that exists in the kernel before it is added (a pod's veth).
	PortSystem = ""
	// PortInternal is an interface ovs-vswitchd creates in the kernel (the host's ovn0).
	PortInternal = "internal"
)

// maxMTU is the largest MTU Linux accepts on any link (IP_MAX_MTU).
const maxMTU = 65535

func (s PortSpec) validateType() error {
	if s.QoS != "" && (s.QoS != QoSTypeNoop || s.Type != PortSystem) {
		return fmt.Errorf("%w: port %s: qos %q (want %q, on a system port)", ovn.ErrInvalid, s.Name, s.QoS, QoSTypeNoop)
	}
	switch s.Type {
	case PortSystem:
		if s.MAC != nil || s.MTU != 0 {
			return fmt.Errorf("%w: port %s: mac and mtu are only for internal ports (the kernel owns a system interface's)",
				ovn.ErrInvalid, s.Name)
		}
		return nil
	case PortInternal:
	default:
		return fmt.Errorf("%w: port %s: type %q is neither %q nor %q", ovn.ErrInvalid, s.Name, s.Type, PortSystem, PortInternal)
	}
	if s.MAC != nil && !ovn.UnicastMAC(s.MAC) {
		return fmt.Errorf("%w: port %s: mac %q is not a unicast ethernet address", ovn.ErrInvalid, s.Name, s.MAC)
	}
	if s.MTU < 0 || s.MTU > maxMTU || (s.MTU > 0 && s.MTU < 68) {
		return fmt.Errorf("%w: port %s: mtu %d is outside 68..%d", ovn.ErrInvalid, s.Name, s.MTU, maxMTU)
	}
	return nil
}

// setInternalColumns fills the columns an internal interface is created with.
func (s PortSpec) setInternalColumns(iface *vswitchdb.Interface) {
	if s.MAC != nil {
		mac := s.MAC.String()
		iface.MAC = &mac
	}
	if s.MTU > 0 {
		mtu := s.MTU
		iface.MTURequest = &mtu
	}
}

// interfaceColumnOps repairs the type, mac and mtu_request of an existing interface where the
// spec says otherwise; a column the spec leaves unset is left as it is.
func (c *Client) interfaceColumnOps(spec PortSpec, iface *vswitchdb.Interface) ([]ovsdb.Operation, error) {
	m := &vswitchdb.Interface{UUID: iface.UUID, Type: spec.Type}
	spec.setInternalColumns(m)
	var fields []any
	if iface.Type != spec.Type {
		fields = append(fields, &m.Type)
	}
	if m.MAC != nil && (iface.MAC == nil || !strings.EqualFold(*iface.MAC, *m.MAC)) {
		fields = append(fields, &m.MAC)
	}
	if m.MTURequest != nil && (iface.MTURequest == nil || *iface.MTURequest != *m.MTURequest) {
		fields = append(fields, &m.MTURequest)
	}
	if len(fields) == 0 {
		return nil, nil
	}
	ops, err := c.ovs.Where(m).Update(m, fields...)
	if err != nil {
		return nil, fmt.Errorf("build interface %s update: %w", iface.Name, err)
	}
	return ops, nil
}
