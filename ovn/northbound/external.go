package northbound

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ExternalPortSpec is a router's link to an external (underlay) switch, as Kube-OVN's
// handleAddVpcExternalSubnet makes it: the router port "<router>-<switch>" at Network with
// MAC and one Gateway_Chassis "<port>-<chassis>" (a distributed gateway port: its NAT and
// ARP for the external addresses happen on that chassis), the switch's port
// "<switch>-<router>" of type router, and the router's default route via Gateway.
type ExternalPortSpec struct {
	Router, Switch string
	Network        netip.Prefix // the port's address with the external subnet's prefix length
	MAC            net.HardwareAddr
	Chassis        string
	Gateway        netip.Addr
	Owner          OwnerRef
}

// RouterPortName is the router's port on the switch, "<router>-<switch>".
func (s ExternalPortSpec) RouterPortName() string { return s.Router + "-" + s.Switch }

func (s ExternalPortSpec) switchPortName() string { return s.Switch + "-" + s.Router }

// Validate reports what is wrong with the spec.
func (s ExternalPortSpec) Validate() error {
	what := "external port " + s.RouterPortName()
	switch {
	case validateName("router", s.Router) != nil || validateName("switch", s.Switch) != nil:
		return fmt.Errorf("%w: %s: router and switch names are required", ovn.ErrInvalid, what)
	case !s.Network.IsValid() || len(s.MAC) != 6 || s.Chassis == "":
		return fmt.Errorf("%w: %s: network, MAC and chassis are required", ovn.ErrInvalid, what)
	case !s.Gateway.IsValid() || !s.Network.Masked().Contains(s.Gateway):
		return fmt.Errorf("%w: %s: gateway %s is not inside %s", ovn.ErrInvalid, what, s.Gateway, s.Network)
	}
	return s.Owner.validate(what)
}

// EnsureExternalPort makes the router's external link exactly spec's in one transaction;
// when everything is right nothing is written.
func (c *Client) EnsureExternalPort(ctx context.Context, spec ExternalPortSpec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	ops, err := c.externalPortOps(ctx, spec)
	if err == nil {
		ops, err = c.switchRouterPortOps(ctx, spec, ops)
	}
	if err == nil {
		def := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if spec.Gateway.Is6() {
			def = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
		ops, err = c.staticRouteOps(ctx, StaticRouteSpec{Router: spec.Router, Prefix: def, NextHop: spec.Gateway, Owner: spec.Owner}, ops)
	}
	if err == nil {
		err = c.commit(ctx, ops)
	}
	if err != nil {
		return fmt.Errorf("ensure external port %s: %w", spec.RouterPortName(), err)
	}
	return nil
}

// externalPortOps appends what makes the router port and its gateway chassis right (a
// changed chassis is a new Gateway_Chassis row; the old one, unreferenced, goes with it).
func (c *Client) externalPortOps(ctx context.Context, spec ExternalPortSpec) ([]ovsdb.Operation, error) {
	lr, err := c.ownedRouter(ctx, spec.Router)
	if err != nil {
		return nil, err
	}
	ids := spec.Owner.ids()
	name := spec.RouterPortName()
	cur, err := c.routerPortByName(ctx, name)
	if err != nil {
		return nil, err
	}
	if cur != nil && !ovn.HasAll(cur.ExternalIDs, ids) {
		return nil, fmt.Errorf("router port %s: %w", name, ovn.ErrNotOwned)
	}
	gwc := &nbdb.GatewayChassis{UUID: "new_gwc", Name: name + "-" + spec.Chassis, ChassisName: spec.Chassis, Priority: 100, ExternalIDs: maps.Clone(ids)}
	want := &nbdb.LogicalRouterPort{UUID: "new_ext_lrp", Name: name, MAC: spec.MAC.String(), Networks: []string{spec.Network.String()},
		GatewayChassis: []string{gwc.UUID}, ExternalIDs: maps.Clone(ids)}
	ops, err := c.nb.Create(gwc)
	if err != nil {
		return nil, fmt.Errorf("build gateway chassis of %s: %w", name, err)
	}
	if cur == nil {
		return c.insertChild(ops, want, want.UUID, parentRef{nbdb.LogicalRouterTable, lr.UUID, lr.Name, "ports"})
	}
	if cur.MAC == want.MAC && sameSet(cur.Networks, want.Networks) && c.onChassis(ctx, cur.GatewayChassis, spec.Chassis) {
		return nil, nil
	}
	want.UUID = cur.UUID
	upd, err := c.nb.Where(want).Update(want, &want.MAC, &want.Networks, &want.GatewayChassis)
	if err != nil {
		return nil, fmt.Errorf("build update of router port %s: %w", name, err)
	}
	return append(ops, upd...), nil
}

// onChassis says whether the port's gateway chassis are exactly one row on chassis.
func (c *Client) onChassis(ctx context.Context, refs []string, chassis string) bool {
	rows, err := byUUID(ctx, c, refs, func(u string) *nbdb.GatewayChassis { return &nbdb.GatewayChassis{UUID: u} })
	return err == nil && len(refs) == 1 && len(rows) == 1 && rows[0].ChassisName == chassis
}

// switchRouterPortOps appends the switch's router-type port when it is missing.
func (c *Client) switchRouterPortOps(ctx context.Context, spec ExternalPortSpec, ops []ovsdb.Operation) ([]ovsdb.Operation, error) {
	ls, err := c.switchByName(ctx, spec.Switch)
	if err != nil {
		return nil, err
	}
	if ls == nil {
		return nil, fmt.Errorf("logical switch %s: %w", spec.Switch, ovn.ErrNotFound)
	}
	name := spec.switchPortName()
	cur, err := c.switchPortByName(ctx, name)
	switch {
	case err != nil:
		return nil, err
	case cur != nil && !ovn.HasAll(cur.ExternalIDs, spec.Owner.ids()):
		return nil, fmt.Errorf("switch port %s: %w", name, ovn.ErrNotOwned)
	case cur != nil:
		return ops, nil
	}
	lsp := &nbdb.LogicalSwitchPort{UUID: "new_ext_lsp", Name: name, Type: "router", Addresses: []string{"router"},
		Options: map[string]string{"router-port": spec.RouterPortName()}, ExternalIDs: maps.Clone(spec.Owner.ids())}
	return c.insertChild(ops, lsp, lsp.UUID, parentRef{nbdb.LogicalSwitchTable, ls.UUID, ls.Name, "ports"})
}

// OwnedNames lists the names of the owners of kind that own a router port, a NAT row or a
// load balancer: what a new term compares with the objects that still exist.
func (c *Client) OwnedNames(ctx context.Context, kind string) ([]string, error) {
	var ports []*nbdb.LogicalRouterPort
	var nats []*nbdb.NAT
	var lbs []*nbdb.LoadBalancer
	if err := c.nb.List(ctx, &lbs); err != nil {
		return nil, fmt.Errorf("list load balancers from cache: %w", err)
	}
	if err := c.nb.List(ctx, &ports); err != nil {
		return nil, fmt.Errorf("list router ports from cache: %w", err)
	}
	if err := c.nb.List(ctx, &nats); err != nil {
		return nil, fmt.Errorf("list nat rows from cache: %w", err)
	}
	seen := map[string]bool{}
	var out []string
	add := func(ids map[string]string) {
		if ovn.IsOwned(ids) && ids[ovn.OwnerKindKey] == kind && !seen[ids[ovn.OwnerKey]] {
			seen[ids[ovn.OwnerKey]] = true
			out = append(out, ids[ovn.OwnerKey])
		}
	}
	for _, p := range ports {
		add(p.ExternalIDs)
	}
	for _, n := range nats {
		add(n.ExternalIDs)
	}
	for _, lb := range lbs {
		add(lb.ExternalIDs)
	}
	return out, nil
}
