package vswitch

import (
	"context"
	"fmt"
	"os"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// BridgeSpec is the desired integration bridge.
type BridgeSpec struct {
	Name         string // "br-int"
	DatapathType string // DatapathSystem or DatapathNetdev (see DetectDatapathType)
	Owner        string // owner tag (the node name); "" means the host name
	// Adopt takes over an existing bridge edgeovn did not create (tagging it) instead of
	// refusing it: br-int is created by ovn-controller itself as soon as it starts, often
	// before edgeovn does, and is edgeovn's to configure either way.
	Adopt bool
}

// Validate reports what is wrong with the spec.
func (s BridgeSpec) Validate() error {
	if err := validateIfaceName("bridge", s.Name); err != nil {
		return err
	}
	if s.DatapathType != DatapathSystem && s.DatapathType != DatapathNetdev {
		return fmt.Errorf("%w: bridge %s: datapath type %q, want %q or %q",
			ovn.ErrInvalid, s.Name, s.DatapathType, DatapathSystem, DatapathNetdev)
	}
	return nil
}

func (s BridgeSpec) owner() map[string]string {
	owner := s.Owner
	if owner == "" {
		owner, _ = os.Hostname()
	}
	return ovn.OwnedBy(ovn.KindNode, owner)
}

// EnsureBridge creates the bridge with its internal port and interface of the same name, as
// ovs-vsctl add-br does, in secure fail mode with in-band control disabled (ovn-controller
// programs all flows). An existing edgeovn bridge whose settings differ is updated; one that
// is right is not written; a bridge not created by edgeovn is ovn.ErrNotOwned unless
// spec.Adopt, which tags and updates it.
func (c *Client) EnsureBridge(ctx context.Context, spec BridgeSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("ensure bridge: %w", err)
	}
	ops, err := c.bridgeOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure bridge %s: %w", spec.Name, err)
	}
	return nil
}

var bridgeOtherConfig = map[string]string{"disable-in-band": "true"}

func (c *Client) bridgeOps(ctx context.Context, spec BridgeSpec) ([]ovsdb.Operation, error) {
	root, err := c.root(ctx)
	if err != nil {
		return nil, err
	}
	br, err := c.bridgeByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	if br == nil {
		return c.createBridgeOps(spec, root)
	}
	owned := ovn.IsOwned(br.ExternalIDs)
	if !owned && !spec.Adopt {
		return nil, fmt.Errorf("bridge %s: %w", spec.Name, ovn.ErrNotOwned)
	}
	secure := vswitchdb.BridgeFailModeSecure
	if owned && br.DatapathType == spec.DatapathType && br.FailMode != nil && *br.FailMode == secure &&
		ovn.HasAll(br.OtherConfig, bridgeOtherConfig) {
		return nil, nil
	}
	ids := br.ExternalIDs
	if !owned {
		ids = merged(br.ExternalIDs, spec.owner())
	}
	m := &vswitchdb.Bridge{
		UUID:         br.UUID,
		DatapathType: spec.DatapathType,
		FailMode:     &secure,
		OtherConfig:  merged(br.OtherConfig, bridgeOtherConfig),
		ExternalIDs:  ids,
	}
	upd, err := c.ovs.Where(m).Update(m, &m.DatapathType, &m.FailMode, &m.OtherConfig, &m.ExternalIDs)
	if err != nil {
		return nil, fmt.Errorf("build bridge update: %w", err)
	}
	return append([]ovsdb.Operation{ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", spec.Name)}, upd...), nil
}

func (c *Client) createBridgeOps(spec BridgeSpec, root *vswitchdb.OpenvSwitch) ([]ovsdb.Operation, error) {
	secure := vswitchdb.BridgeFailModeSecure
	owner := spec.owner()
	iface := &vswitchdb.Interface{UUID: "new_iface", Name: spec.Name, Type: "internal", ExternalIDs: owner}
	port := &vswitchdb.Port{UUID: "new_port", Name: spec.Name, Interfaces: []string{iface.UUID}, ExternalIDs: owner}
	br := &vswitchdb.Bridge{
		UUID:         "new_bridge",
		Name:         spec.Name,
		DatapathType: spec.DatapathType,
		FailMode:     &secure,
		OtherConfig:  bridgeOtherConfig,
		Ports:        []string{port.UUID},
		ExternalIDs:  owner,
	}
	inserts, err := c.ovs.Create(iface, port, br)
	if err != nil {
		return nil, fmt.Errorf("build bridge rows: %w", err)
	}
	ops := []ovsdb.Operation{ovn.WaitAbsent(vswitchdb.BridgeTable, "name", spec.Name)}
	ops = append(ops, inserts...)
	return append(ops, ovn.MutateRefs(vswitchdb.OpenvSwitchTable, root.UUID, "bridges", ovsdb.MutateOperationInsert, br.UUID)), nil
}
