package node

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
)

// defaultEncapIP is the source address the kernel would use towards the outside; a host with
// no default route (a lone edge box) tunnels over loopback, which only it uses.
func defaultEncapIP() (netip.Addr, error) {
	routes, err := netlink.RouteGet(net.IPv4(192, 0, 2, 1))
	if err != nil || len(routes) == 0 || routes[0].Src == nil {
		return netip.MustParseAddr("127.0.0.1"), nil
	}
	a, ok := netip.AddrFromSlice(routes[0].Src)
	if !ok {
		return netip.Addr{}, fmt.Errorf("default route source %v: not an address", routes[0].Src)
	}
	return a.Unmap(), nil
}
