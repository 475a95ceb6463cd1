package northbound

import (
	"maps"
	"net/netip"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// The desired rows of an attachment, computed from the spec alone so that they can be
// checked without a server. UUIDs are the named UUIDs used when the rows are inserted.

// routerPortRow is the router's port on the switch: the gateway address with the subnet's
// prefix length, and a MAC derived from the gateway so that it is stable across ensures.
func (a attachment) routerPortRow() nbdb.LogicalRouterPort {
	networks := make([]string, len(a.CIDRs))
	for i, cidr := range a.CIDRs {
		networks[i] = netip.PrefixFrom(a.Gateways[i], cidr.Bits()).String()
	}
	return nbdb.LogicalRouterPort{
		UUID:        "new_lrp",
		Name:        a.routerPortName(),
		MAC:         GatewayMAC(a.Gateways[0]).String(),
		Networks:    networks,
		Options:     a.routerPortOptions(nil),
		ExternalIDs: maps.Clone(a.Owner),
	}
}

// routerPortOptions are cur (the port's options now) with route_table set to the
// attachment's, or removed when it has none.
func (a attachment) routerPortOptions(cur map[string]string) map[string]string {
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]string{}
	}
	delete(out, RouteTableOption)
	if a.RouteTable != "" {
		out[RouteTableOption] = a.RouteTable
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// switchPortRow is the switch's port of type router peering with routerPortRow.
func (a attachment) switchPortRow() nbdb.LogicalSwitchPort {
	return nbdb.LogicalSwitchPort{
		UUID:        "new_lsp",
		Name:        a.switchPortName(),
		Type:        "router",
		Addresses:   []string{"router"},
		Options:     map[string]string{"router-port": a.routerPortName()},
		ExternalIDs: maps.Clone(a.Owner),
	}
}
