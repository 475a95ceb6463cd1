package vswitch

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

// KeyBridgeMappings is the Open_vSwitch external_ids key ovn-controller reads to find the
// bridge of a localnet port's network: "provider:bridge,...".
const KeyBridgeMappings = "ovn-bridge-mappings"

// KeyProvider tags a provider bridge and its uplink port with their provider network's name.
const KeyProvider = "edgeovn-provider"

// ProviderBridgeSpec is an underlay bridge: br-<provider> with the host's NIC as its uplink,
// in standalone fail mode (the NORMAL switch: ovn-controller only adds its patch port), as
// Kube-OVN makes it.
type ProviderBridgeSpec struct {
	Provider     string
	Name         string // br-<provider>
	NIC          string // the uplink, an existing kernel interface
	DatapathType string
	Owner        string // the node name
	// HWAddr is the bridge's MAC (other_config:hwaddr). Without it ovs-vswitchd gives the
	// bridge the lowest MAC of its ports, and on the userspace datapath it brings the bridge's
	// tap down to change it each time that changes (when ovn-controller adds its patch port),
	// which makes the kernel drop every IPv4 route through the bridge.
	HWAddr net.HardwareAddr
}

// ProviderBridge is an edgeovn provider bridge as the database has it.
type ProviderBridge struct {
	Provider, Name string
	NICs           []string // its system ports (the uplink)
}

// Validate reports what is wrong with the spec.
func (s ProviderBridgeSpec) Validate() error {
	if err := validateIfaceName("bridge", s.Name); err != nil {
		return err
	}
	if err := validateIfaceName("uplink", s.NIC); err != nil {
		return err
	}
	if s.Provider == "" || strings.ContainsAny(s.Provider, ":, \t\"") {
		return fmt.Errorf("%w: provider %q", ovn.ErrInvalid, s.Provider)
	}
	if s.DatapathType != DatapathSystem && s.DatapathType != DatapathNetdev {
		return fmt.Errorf("%w: bridge %s: datapath type %q", ovn.ErrInvalid, s.Name, s.DatapathType)
	}
	return nil
}

func (s ProviderBridgeSpec) ids() map[string]string {
	ids := ovn.OwnedBy(ovn.KindNode, s.Owner)
	ids[KeyProvider] = s.Provider
	return ids
}

func (s ProviderBridgeSpec) otherConfig() map[string]string {
	if s.HWAddr == nil {
		return map[string]string{}
	}
	return map[string]string{"hwaddr": s.HWAddr.String()}
}

// EnsureProviderBridge creates the bridge with its internal port and the NIC as a port, or
// adds the NIC to the bridge edgeovn made, in one transaction; another edgeovn uplink on it
// (a NIC the spec no longer names) is removed. A bridge of that name edgeovn did not make is
// ovn.ErrNotOwned; a NIC that is a port of another bridge is ovn.ErrConflict. When everything
// is right nothing is written.
func (c *Client) EnsureProviderBridge(ctx context.Context, spec ProviderBridgeSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("ensure provider bridge: %w", err)
	}
	ops, err := c.providerBridgeOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure provider bridge %s with uplink %s: %w", spec.Name, spec.NIC, err)
	}
	return nil
}

func (c *Client) providerBridgeOps(ctx context.Context, spec ProviderBridgeSpec) ([]ovsdb.Operation, error) {
	root, err := c.root(ctx)
	if err != nil {
		return nil, err
	}
	br, err := c.bridgeByName(ctx, spec.Name)
	if err != nil {
		return nil, err
	}
	if br != nil && !ovn.IsOwned(br.ExternalIDs) {
		return nil, fmt.Errorf("bridge %s: %w", spec.Name, ovn.ErrNotOwned)
	}
	if p, err := c.portByName(ctx, spec.NIC); err != nil {
		return nil, err
	} else if p != nil && (br == nil || !slices.Contains(br.Ports, p.UUID)) {
		return nil, fmt.Errorf("%w: %s is already a port of another bridge", ovn.ErrConflict, spec.NIC)
	}
	ids := spec.ids()
	uplink := &vswitchdb.Interface{UUID: "new_uplink_iface", Name: spec.NIC, ExternalIDs: ids}
	uport := &vswitchdb.Port{UUID: "new_uplink", Name: spec.NIC, Interfaces: []string{uplink.UUID}, ExternalIDs: ids}
	if br == nil {
		iface := &vswitchdb.Interface{UUID: "new_iface", Name: spec.Name, Type: "internal", ExternalIDs: ids}
		port := &vswitchdb.Port{UUID: "new_port", Name: spec.Name, Interfaces: []string{iface.UUID}, ExternalIDs: ids}
		nb := &vswitchdb.Bridge{UUID: "new_bridge", Name: spec.Name, DatapathType: spec.DatapathType,
			Ports: []string{port.UUID, uport.UUID}, ExternalIDs: ids, OtherConfig: spec.otherConfig()}
		inserts, err := c.ovs.Create(iface, port, uplink, uport, nb)
		if err != nil {
			return nil, fmt.Errorf("build bridge rows: %w", err)
		}
		ops := []ovsdb.Operation{ovn.WaitAbsent(vswitchdb.BridgeTable, "name", spec.Name), ovn.WaitAbsent(vswitchdb.PortTable, "name", spec.NIC)}
		ops = append(ops, inserts...)
		return append(ops, ovn.MutateRefs(vswitchdb.OpenvSwitchTable, root.UUID, "bridges", ovsdb.MutateOperationInsert, nb.UUID)), nil
	}
	var ops []ovsdb.Operation
	for _, pu := range br.Ports {
		p := &vswitchdb.Port{UUID: pu}
		if err := c.ovs.Get(ctx, p); err != nil {
			continue
		}
		if p.Name != spec.NIC && p.Name != spec.Name && p.ExternalIDs[KeyProvider] != "" {
			ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationDelete, pu))
		}
	}
	if p, _ := c.portByName(ctx, spec.NIC); p == nil {
		inserts, err := c.ovs.Create(uplink, uport)
		if err != nil {
			return nil, fmt.Errorf("build uplink rows: %w", err)
		}
		ops = append(ops, ovn.WaitAbsent(vswitchdb.PortTable, "name", spec.NIC))
		ops = append(ops, inserts...)
		ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", ovsdb.MutateOperationInsert, uport.UUID))
	}
	if br.DatapathType != spec.DatapathType || !ovn.HasAll(br.OtherConfig, spec.otherConfig()) {
		m := &vswitchdb.Bridge{UUID: br.UUID, DatapathType: spec.DatapathType, OtherConfig: merged(br.OtherConfig, spec.otherConfig())}
		upd, err := c.ovs.Where(m).Update(m, &m.DatapathType, &m.OtherConfig)
		if err != nil {
			return nil, fmt.Errorf("build bridge update: %w", err)
		}
		ops = append(ops, upd...)
	}
	if len(ops) == 0 {
		return nil, nil
	}
	return append([]ovsdb.Operation{ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", spec.Name)}, ops...), nil
}

// ProviderBridges lists the provider bridges edgeovn made (tagged KeyProvider).
func (c *Client) ProviderBridges(ctx context.Context) ([]ProviderBridge, error) {
	var brs []vswitchdb.Bridge
	if err := c.ovs.List(ctx, &brs); err != nil {
		return nil, fmt.Errorf("list bridges: %w", err)
	}
	var out []ProviderBridge
	for _, br := range brs {
		if !ovn.IsOwned(br.ExternalIDs) || br.ExternalIDs[KeyProvider] == "" {
			continue
		}
		pb := ProviderBridge{Provider: br.ExternalIDs[KeyProvider], Name: br.Name}
		for _, pu := range br.Ports {
			p := &vswitchdb.Port{UUID: pu}
			if err := c.ovs.Get(ctx, p); err == nil && p.Name != br.Name && !c.isPatchPort(ctx, p) {
				pb.NICs = append(pb.NICs, p.Name)
			}
		}
		slices.Sort(pb.NICs)
		out = append(out, pb)
	}
	slices.SortFunc(out, func(a, b ProviderBridge) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// isPatchPort says whether the port is a patch port (ovn-controller's to br-int for a
// localnet port): not the bridge's uplink. Counted as one, a provider bridge with an underlay
// Subnet would look as if it held a second NIC and be given back and taken again at each sync.
func (c *Client) isPatchPort(ctx context.Context, p *vswitchdb.Port) bool {
	for _, iu := range p.Interfaces {
		i := &vswitchdb.Interface{UUID: iu}
		if err := c.ovs.Get(ctx, i); err == nil && i.Type == "patch" {
			return true
		}
	}
	return false
}

// DeleteProviderBridge removes the provider bridge edgeovn made (its ports and interfaces go
// with it). A missing bridge is success; one without edgeovn's provider tag is ovn.ErrNotOwned.
func (c *Client) DeleteProviderBridge(ctx context.Context, name string) error {
	root, err := c.root(ctx)
	if err != nil {
		return fmt.Errorf("delete provider bridge %s: %w", name, err)
	}
	br, err := c.bridgeByName(ctx, name)
	if err != nil || br == nil {
		return err
	}
	if !ovn.IsOwned(br.ExternalIDs) || br.ExternalIDs[KeyProvider] == "" {
		return fmt.Errorf("delete provider bridge %s: %w", name, ovn.ErrNotOwned)
	}
	ops := []ovsdb.Operation{
		ovn.WaitPresent(vswitchdb.BridgeTable, br.UUID, "name", name),
		ovn.MutateRefs(vswitchdb.OpenvSwitchTable, root.UUID, "bridges", ovsdb.MutateOperationDelete, br.UUID),
	}
	if err := c.commit(ctx, ops); err != nil {
		return fmt.Errorf("delete provider bridge %s: %w", name, err)
	}
	return nil
}

// SetBridgeMapping sets (bridge != "") or removes (bridge == "") provider's entry in
// ovn-bridge-mappings, keeping the others (an administrator's among them).
func (c *Client) SetBridgeMapping(ctx context.Context, provider, bridge string) error {
	return c.setMapping(ctx, KeyBridgeMappings, provider, bridge)
}

// KeyChassisMACMappings is ovn-controller's per-provider chassis MAC: routed traffic leaves
// through a localnet port with this MAC instead of the (distributed) router port's, so the
// site's switch does not see one router MAC from every host (Kube-OVN sets it per provider).
const KeyChassisMACMappings = "ovn-chassis-mac-mappings"

// SetChassisMACMapping sets (mac != "") or removes (mac == "") provider's entry in
// ovn-chassis-mac-mappings, keeping the others.
func (c *Client) SetChassisMACMapping(ctx context.Context, provider, mac string) error {
	return c.setMapping(ctx, KeyChassisMACMappings, provider, mac)
}

// setMapping sets or removes provider's entry of the "provider:value,..." external_id key.
func (c *Client) setMapping(ctx context.Context, key, provider, value string) error {
	root, err := c.root(ctx)
	if err != nil {
		return fmt.Errorf("set %s of %s: %w", key, provider, err)
	}
	m := ParseBridgeMappings(root.ExternalIDs[key])
	if m[provider] == value {
		return nil
	}
	if value == "" {
		delete(m, provider)
	} else {
		m[provider] = value
	}
	if len(m) == 0 {
		return c.UnsetOVNConfig(ctx, key)
	}
	return c.SetOVNConfig(ctx, map[string]string{key: FormatBridgeMappings(m)})
}

// ParseBridgeMappings reads "a:br-a,b:br-b".
func ParseBridgeMappings(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), ":"); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// FormatBridgeMappings writes m sorted by provider.
func FormatBridgeMappings(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+":"+m[k])
	}
	return strings.Join(parts, ",")
}
