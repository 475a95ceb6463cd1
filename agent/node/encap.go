package node

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/vishvananda/netlink"

	"github.com/edgeovn/edgeovn/agent/config"
)

// ErrNoEncapIP: no tunnel endpoint could be found; the node is not ready until one is.
var ErrNoEncapIP = errors.New("no encapsulation address")

// encapSource is what the tunnel endpoint is chosen from: the configuration, the host's IPv4
// default routes and addresses, and the Node's InternalIP.
type encapSource struct {
	Fixed  netip.Addr // --encap-ip: wins when set
	From   string     // config.EncapFromDefaultRoute or config.EncapFromNodeIP
	NodeIP netip.Addr // the Node's InternalIP; invalid: not known (yet)
	// Defaults are the IPv4 default routes of the main table, each with its source address
	// resolved (the route's own, else the one the kernel picks towards its gateway).
	Defaults []defaultRoute
	// Local are the host's addresses.
	Local []netip.Addr
}

// defaultRoute is one IPv4 default route.
type defaultRoute struct {
	Src    netip.Addr // invalid: the kernel gave none
	Dev    string
	Metric int
}

// Sources of EncapIPFrom (config's names, short).
const (
	encapFromDefaultRoute = config.EncapFromDefaultRoute
	encapFromNodeIP       = config.EncapFromNodeIP
)

// chooseEncapIP picks the tunnel endpoint, never a loopback, or says why there is none.
func chooseEncapIP(s encapSource) (netip.Addr, error) {
	if s.Fixed.IsValid() {
		return s.Fixed, nil
	}
	if s.From == encapFromNodeIP {
		return encapFromNode(s)
	}
	routes := slices.Clone(s.Defaults)
	slices.SortStableFunc(routes, func(a, b defaultRoute) int { return a.Metric - b.Metric })
	if len(routes) == 0 {
		return netip.Addr{}, fmt.Errorf("%w: no IPv4 default route to take the source address from (add one, or set encap-ip)", ErrNoEncapIP)
	}
	r := routes[0]
	switch {
	case !r.Src.IsValid():
		return netip.Addr{}, fmt.Errorf("%w: the default route via %s has no source address (give the device an address, or set encap-ip)", ErrNoEncapIP, r.Dev)
	case !usableEncap(r.Src):
		return netip.Addr{}, fmt.Errorf("%w: the default route's source address %s (dev %s) is not one other hosts can reach (set encap-ip)", ErrNoEncapIP, r.Src, r.Dev)
	}
	return r.Src, nil
}

func encapFromNode(s encapSource) (netip.Addr, error) {
	switch {
	case !s.NodeIP.IsValid():
		return netip.Addr{}, fmt.Errorf("%w: the Node has no IPv4 InternalIP (yet) to tunnel from (encap-ip-from %s)", ErrNoEncapIP, encapFromNodeIP)
	case !usableEncap(s.NodeIP):
		return netip.Addr{}, fmt.Errorf("%w: the Node's InternalIP %s is not an address other hosts can reach (set encap-ip)", ErrNoEncapIP, s.NodeIP)
	case !slices.Contains(s.Local, s.NodeIP):
		return netip.Addr{}, fmt.Errorf("%w: the Node's InternalIP %s is not an address of this host", ErrNoEncapIP, s.NodeIP)
	}
	return s.NodeIP, nil
}

func usableEncap(a netip.Addr) bool {
	return a.IsValid() && !a.IsLoopback() && !a.IsUnspecified() && !a.IsMulticast() && !a.IsLinkLocalUnicast()
}

// readEncapSource reads the host's IPv4 default routes and addresses through netlink.
func readEncapSource(s encapSource) (encapSource, error) {
	routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: 254}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return s, fmt.Errorf("list routes: %w", err)
	}
	s.Defaults = nil
	for _, r := range routes {
		if r.Dst != nil && !isDefault(r.Dst) {
			continue
		}
		d := defaultRoute{Metric: r.Priority, Src: addrOf(r.Src)}
		if l, err := netlink.LinkByIndex(r.LinkIndex); err == nil {
			d.Dev = l.Attrs().Name
		}
		if !d.Src.IsValid() && r.Gw != nil {
			if got, err := netlink.RouteGet(r.Gw); err == nil && len(got) > 0 {
				d.Src = addrOf(got[0].Src)
			}
		}
		s.Defaults = append(s.Defaults, d)
	}
	addrs, err := netlink.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return s, fmt.Errorf("list addresses: %w", err)
	}
	s.Local = nil
	for _, a := range addrs {
		s.Local = append(s.Local, addrOf(a.IP))
	}
	return s, nil
}

func isDefault(n *net.IPNet) bool {
	ones, _ := n.Mask.Size()
	return ones == 0
}

func addrOf(ip net.IP) netip.Addr {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return netip.Addr{}
	}
	return a.Unmap()
}
