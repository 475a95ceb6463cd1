package vswitch

import (
	"context"
	"fmt"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// staleTwinOps deletes, in the transaction that adds or updates spec's port, every other
// edgeovn port on the bridge whose interface carries the same iface-id: a sandbox lost
// without a CNI DEL (a reboot, a runtime crash) leaves its port behind with the logical
// port's iface-id, and the pod's next ADD makes a new one under another name.
//
// Why in the same transaction: ovn-controller (23.03) binds one interface per logical port.
// With two interfaces of one iface-id it claims the new one, and when the old one is deleted
// later (by the port sweep, since its device is gone) it releases the logical port and never
// claims it again, though the new interface still carries the iface-id. Deleting the twin
// with the add means ovn-controller only ever sees one interface per iface-id, so a later
// deletion of any edgeovn port never takes a live binding with it.
//
// Foreign ports are left alone (never edgeovn's to delete), and so are internal ports (the
// host's ovn0 is no pod's).
func (c *Client) staleTwinOps(ctx context.Context, br *vswitchdb.Bridge, spec PortSpec) ([]ovsdb.Operation, error) {
	var twins []*vswitchdb.Interface
	err := c.ovs.WhereCache(func(i *vswitchdb.Interface) bool {
		return i.ExternalIDs[KeyIfaceID] == spec.IfaceID && i.Name != spec.Name && i.Type != PortInternal
	}).List(ctx, &twins)
	if err != nil {
		return nil, fmt.Errorf("find other interfaces of iface-id %s: %w", spec.IfaceID, err)
	}
	var ops []ovsdb.Operation
	for _, iface := range twins {
		port, err := c.portOfInterface(ctx, br, iface.UUID)
		if err != nil {
			return nil, err
		}
		if port == nil || !ovn.IsOwned(port.ExternalIDs) || port.Name == br.Name {
			continue
		}
		ops = append(ops,
			ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationDelete, port.UUID),
			ovn.DeleteRow(vswitchdb.PortTable, port.UUID))
		ops = append(ops, c.ownedQoSDelete(ctx, port)...)
	}
	return ops, nil
}

// portOfInterface returns the port of br that holds the interface, nil if none.
func (c *Client) portOfInterface(ctx context.Context, br *vswitchdb.Bridge, ifaceUUID string) (*vswitchdb.Port, error) {
	var ports []*vswitchdb.Port
	err := c.ovs.WhereCache(func(p *vswitchdb.Port) bool {
		return slices.Contains(p.Interfaces, ifaceUUID) && slices.Contains(br.Ports, p.UUID)
	}).List(ctx, &ports)
	if err != nil {
		return nil, fmt.Errorf("find the port of interface %s: %w", ifaceUUID, err)
	}
	if len(ports) == 0 {
		return nil, nil
	}
	return ports[0], nil
}
