package northbound

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// ExternalPortSpec is a router's link to an external (underlay) switch, as Kube-OVN's
// handleAddVpcExternalSubnet makes it: the router port "<router>-<switch>" at Network with
// MAC and a Gateway_Chassis "<port>-<chassis>" per chassis (a distributed gateway port: its
// NAT and ARP for the external addresses happen on the highest-priority chassis that is up;
// OVN moves it to the next when BFD finds that one down), the switch's port
// "<switch>-<router>" of type router, and the router's default route via Gateway.
type ExternalPortSpec struct {
	Router, Switch string
	Network        netip.Prefix // the port's address with the external subnet's prefix length
	MAC            net.HardwareAddr
	// Chassis are the gateway chassis in priority order: the first gets priority 100, the
	// next 99, and so on, as Kube-OVN's CreateGatewayChassises.
	Chassis []string
	Gateway netip.Addr
	Owner   OwnerRef
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
	case !s.Network.IsValid() || len(s.MAC) != 6 || len(s.Chassis) == 0:
		return fmt.Errorf("%w: %s: network, MAC and chassis are required", ovn.ErrInvalid, what)
	case len(s.Chassis) > 100 || slices.Contains(s.Chassis, "") || len(slices.Compact(slices.Sorted(slices.Values(s.Chassis)))) != len(s.Chassis):
		return fmt.Errorf("%w: %s: chassis %q: want 1-100 distinct names", ovn.ErrInvalid, what, s.Chassis)
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

// externalPortOps appends what makes the router port and its gateway chassis right.
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
	var have []string
	if cur != nil {
		have = cur.GatewayChassis
	}
	refs, ops, same, err := c.gatewayChassisOps(ctx, name, have, spec.Chassis, ids)
	if err != nil {
		return nil, err
	}
	want := &nbdb.LogicalRouterPort{UUID: "new_ext_lrp", Name: name, MAC: spec.MAC.String(), Networks: []string{spec.Network.String()},
		GatewayChassis: refs, ExternalIDs: maps.Clone(ids)}
	if cur == nil {
		return c.insertChild(ops, want, want.UUID, parentRef{nbdb.LogicalRouterTable, lr.UUID, lr.Name, "ports"})
	}
	if cur.MAC == want.MAC && sameSet(cur.Networks, want.Networks) && same {
		return nil, nil
	}
	want.UUID = cur.UUID
	upd, err := c.nb.Where(want).Update(want, &want.MAC, &want.Networks, &want.GatewayChassis)
	if err != nil {
		return nil, fmt.Errorf("build update of router port %s: %w", name, err)
	}
	return append(ops, upd...), nil
}

// gatewayChassisOps returns the port's gateway_chassis column for chassis (priority 100 for
// the first, 99 for the next, ...) and the operations that make its rows: a row of the port
// already on a chassis is kept (its priority updated when it differs), one for a new chassis
// is created; a row no longer listed leaves the column and, unreferenced, goes with it. same
// says the rows were already exactly these.
func (c *Client) gatewayChassisOps(ctx context.Context, port string, have, chassis []string, ids map[string]string) ([]string, []ovsdb.Operation, bool, error) {
	rows, err := byUUID(ctx, c, have, func(u string) *nbdb.GatewayChassis { return &nbdb.GatewayChassis{UUID: u} })
	if err != nil {
		return nil, nil, false, fmt.Errorf("read gateway chassis of %s: %w", port, err)
	}
	byChassis := map[string]*nbdb.GatewayChassis{}
	for _, r := range rows {
		byChassis[r.ChassisName] = r
	}
	same := len(rows) == len(have) && len(have) == len(chassis)
	var refs []string
	var ops []ovsdb.Operation
	for i, ch := range chassis {
		prio := 100 - i
		r := byChassis[ch]
		var op []ovsdb.Operation
		switch {
		case r == nil:
			r = &nbdb.GatewayChassis{UUID: fmt.Sprintf("new_gwc%d", i), Name: port + "-" + ch, ChassisName: ch, Priority: prio, ExternalIDs: maps.Clone(ids)}
			op, err = c.nb.Create(r)
			same = false
		case r.Priority != prio:
			r.Priority = prio
			op, err = c.nb.Where(r).Update(r, &r.Priority)
			same = false
		}
		if err != nil {
			return nil, nil, false, fmt.Errorf("build gateway chassis %s of %s: %w", ch, port, err)
		}
		refs, ops = append(refs, r.UUID), append(ops, op...)
	}
	return refs, ops, same, nil
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
