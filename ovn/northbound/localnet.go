package northbound

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// LocalnetSpec makes a Subnet's switch an underlay switch, as Kube-OVN does for a Subnet with
// spec.vlan: a port of type localnet, "localnet.<switch>", whose traffic ovn-controller sends
// out through the bridge that ovn-bridge-mappings gives Provider, tagged with Tag (0:
// untagged). Without LogicalGateway the switch has no router port: the pods' gateway is the
// site's router on the provider network, and a router port at its address would answer for it.
type LocalnetSpec struct {
	Switch   string
	Router   string // the cluster router the switch's router port is on (or would be)
	CIDRs    []netip.Prefix
	Provider string // the ProviderNetwork (the localnet's network_name)
	Tag      int    // 0-4095; 0 is untagged
	// LogicalGateway keeps the switch's router port (EnsureSubnet makes it); false removes it.
	LogicalGateway bool
}

// LocalnetPortName is the localnet port of switch sw, Kube-OVN's name.
func LocalnetPortName(sw string) string { return "localnet." + sw }

// Validate reports what is wrong with the spec.
func (s LocalnetSpec) Validate() error {
	if err := validateName("subnet", s.Switch); err != nil {
		return err
	}
	if err := validateName("provider", s.Provider); err != nil {
		return err
	}
	if s.Tag < 0 || s.Tag > 4095 {
		return fmt.Errorf("%w: subnet %s: vlan tag %d out of range 0-4095", ovn.ErrInvalid, s.Switch, s.Tag)
	}
	if len(s.CIDRs) == 0 {
		return fmt.Errorf("%w: subnet %s: no CIDR", ovn.ErrInvalid, s.Switch)
	}
	return nil
}

func (s LocalnetSpec) port() *nbdb.LogicalSwitchPort {
	p := &nbdb.LogicalSwitchPort{
		UUID:        "new_localnet",
		Name:        LocalnetPortName(s.Switch),
		Type:        "localnet",
		Addresses:   []string{"unknown"},
		Options:     map[string]string{"network_name": s.Provider},
		ExternalIDs: ovn.OwnedBy(ovn.KindSubnet, s.Switch),
	}
	if s.Tag != 0 {
		tag := s.Tag
		p.Tag = &tag
	}
	return p
}

// EnsureLocalnet creates or repairs the switch (as EnsureSubnet makes it, when missing) and
// its localnet port, and removes the switch's router port unless spec.LogicalGateway, in one
// transaction. When everything is right nothing is written.
func (c *Client) EnsureLocalnet(ctx context.Context, spec LocalnetSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("ensure localnet: %w", err)
	}
	ops, err := c.localnetOps(ctx, spec)
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure localnet port of subnet %s (provider %s, tag %d): %w", spec.Switch, spec.Provider, spec.Tag, err)
	}
	return nil
}

func (c *Client) localnetOps(ctx context.Context, spec LocalnetSpec) ([]ovsdb.Operation, error) {
	sw, err := c.switchByName(ctx, spec.Switch)
	if err != nil {
		return nil, err
	}
	want := spec.port()
	if sw == nil {
		return c.newUnderlaySwitchOps(spec, want)
	}
	if !ovn.IsOwned(sw.ExternalIDs) {
		return nil, fmt.Errorf("logical switch %s: %w", spec.Switch, ovn.ErrNotOwned)
	}
	cur, err := c.switchPortByName(ctx, want.Name)
	if err != nil {
		return nil, err
	}
	var ops []ovsdb.Operation
	switch {
	case cur == nil:
		ops, err = c.insertChild(nil, want, want.UUID, parentRef{Table: nbdb.LogicalSwitchTable, UUID: sw.UUID, Name: sw.Name, Column: "ports"})
	case !ovn.IsOwned(cur.ExternalIDs):
		return nil, fmt.Errorf("logical switch port %s: %w", want.Name, ovn.ErrNotOwned)
	case cur.Type != want.Type || !maps.Equal(cur.Options, want.Options) || !sameTag(cur.Tag, want.Tag) || !slices.Equal(cur.Addresses, want.Addresses):
		m := *want
		m.UUID = cur.UUID
		ops, err = c.nb.Where(&m).Update(&m, &m.Type, &m.Options, &m.Tag, &m.Addresses)
	}
	if err != nil {
		return nil, fmt.Errorf("build localnet port %s: %w", want.Name, err)
	}
	if spec.LogicalGateway {
		return ops, nil
	}
	detach, err := c.detachRouterOps(ctx, spec, sw)
	return append(ops, detach...), err
}

func (c *Client) newUnderlaySwitchOps(spec LocalnetSpec, port *nbdb.LogicalSwitchPort) ([]ovsdb.Operation, error) {
	ops, err := c.nb.Create(port, &nbdb.LogicalSwitch{
		UUID:        "new_switch",
		Name:        spec.Switch,
		OtherConfig: switchOtherConfig(spec.CIDRs),
		ExternalIDs: ovn.OwnedBy(ovn.KindSubnet, spec.Switch),
		Ports:       []string{port.UUID},
	})
	if err != nil {
		return nil, fmt.Errorf("build logical switch %s: %w", spec.Switch, err)
	}
	return append([]ovsdb.Operation{ovn.WaitAbsent(nbdb.LogicalSwitchTable, "name", spec.Switch)}, ops...), nil
}

// detachRouterOps removes the switch's router port pair (an overlay Subnet turned underlay, or
// logicalGateway turned off); both rows are non-root and go with their references.
func (c *Client) detachRouterOps(ctx context.Context, spec LocalnetSpec, sw *nbdb.LogicalSwitch) ([]ovsdb.Operation, error) {
	a := attachment{Router: spec.Router, Switch: spec.Switch}
	var ops []ovsdb.Operation
	lsp, err := c.switchPortByName(ctx, a.switchPortName())
	if err != nil {
		return nil, err
	}
	if lsp != nil && ovn.IsOwned(lsp.ExternalIDs) && slices.Contains(sw.Ports, lsp.UUID) {
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalSwitchTable, sw.UUID, "ports", ovsdb.MutateOperationDelete, lsp.UUID))
	}
	router, err := c.routerByName(ctx, spec.Router)
	if err != nil || router == nil {
		return ops, err
	}
	lrp, err := c.routerPortByName(ctx, a.routerPortName())
	if err != nil {
		return nil, err
	}
	if lrp != nil && ovn.IsOwned(lrp.ExternalIDs) && slices.Contains(router.Ports, lrp.UUID) {
		ops = append(ops, ovn.MutateRefs(nbdb.LogicalRouterTable, router.UUID, "ports", ovsdb.MutateOperationDelete, lrp.UUID))
	}
	return ops, nil
}

func sameTag(a, b *int) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
