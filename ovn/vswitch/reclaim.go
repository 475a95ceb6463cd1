package vswitch

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// BindingLost reports whether ovn-controller bound the port once and has released it since:
// it removes ovn-installed on release but leaves ovn-installed-ts, which only an iface-id
// change (AddPort) clears.
func (p Port) BindingLost() bool {
	return p.ExternalIDs[keyInstalledTS] != "" && p.ExternalIDs[KeyOVNInstalled] != "true"
}

// ReclaimPort makes ovn-controller claim the port's logical port again: it removes the
// interface's iface-id and sets it back, in two transactions. ovn-controller (23.03) does
// not reconsider an interface it released unless its iface-id changes: another update of
// the row (a new key) leaves the logical port unbound. The port must be an edgeovn pod port
// with an iface-id (ovn.ErrNotFound, ovn.ErrNotOwned otherwise).
func (c *Client) ReclaimPort(ctx context.Context, name string) error {
	iface, id, err := c.reclaimTarget(ctx, name)
	if err == nil {
		guard := ovn.WaitPresent(vswitchdb.InterfaceTable, iface.UUID, "name", name)
		err = c.commit(ctx, []ovsdb.Operation{guard, setKeys(vswitchdb.InterfaceTable, iface.UUID, "external_ids", nil, []string{KeyIfaceID})})
		if err == nil {
			err = c.commit(ctx, []ovsdb.Operation{guard, setKeys(vswitchdb.InterfaceTable, iface.UUID, "external_ids", map[string]string{KeyIfaceID: id}, nil)})
		}
	}
	if err != nil {
		return fmt.Errorf("reclaim port %s: %w", name, err)
	}
	return nil
}

func (c *Client) reclaimTarget(ctx context.Context, name string) (*vswitchdb.Interface, string, error) {
	_, iface, err := c.ownedPortAndInterface(ctx, name)
	if err != nil {
		return nil, "", err
	}
	id := iface.ExternalIDs[KeyIfaceID]
	if id == "" || iface.Type == PortInternal {
		return nil, "", fmt.Errorf("%w: interface %s is no pod port (iface-id %q, type %q)", ovn.ErrInvalid, name, id, iface.Type)
	}
	return iface, id, nil
}
