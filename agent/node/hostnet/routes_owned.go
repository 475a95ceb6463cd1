package hostnet

import (
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// OwnedRoute is one of edgeovn's routes (RouteProtocol), as a clean-up lists it.
type OwnedRoute struct {
	route netlink.Route
	Text  string // "10.42.0.0/16 via 100.64.0.1 dev ovn0 proto 211"
}

// OwnedRoutes lists edgeovn's routes, IPv4 and IPv6, in every table; no other route is
// listed.
func OwnedRoutes() ([]OwnedRoute, error) {
	routes, err := netlinksafe.RouteListFiltered(netlink.FAMILY_ALL,
		&netlink.Route{Table: unix.RT_TABLE_UNSPEC, Protocol: RouteProtocol}, netlink.RT_FILTER_TABLE|netlink.RT_FILTER_PROTOCOL)
	if err != nil {
		return nil, fmt.Errorf("list edgeovn's routes: %w", err)
	}
	out := make([]OwnedRoute, 0, len(routes))
	for _, r := range routes {
		if r.Protocol != RouteProtocol {
			continue
		}
		dst, ok := routeDst(r)
		if !ok {
			dst = netip.Prefix{}
		}
		out = append(out, OwnedRoute{route: r, Text: describeRoute(r, dst)})
	}
	return out, nil
}

// DeleteRoute deletes one of edgeovn's routes; one gone already is not an error.
func DeleteRoute(r OwnedRoute) error {
	if r.route.Protocol != RouteProtocol {
		return fmt.Errorf("%w: route %s is not edgeovn's", ErrInvalid, r.Text)
	}
	if err := netlink.RouteDel(&r.route); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("delete route %s: %w", r.Text, err)
	}
	return nil
}
