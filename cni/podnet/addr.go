package podnet

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/plugins/pkg/utils/sysctl"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// configureAddrs adds the pod's addresses, brings the link up and installs one default route
// per family. IPv6 addresses skip duplicate address detection: OVN owns the address plan,
// and DAD would delay the pod by about a second for nothing.
func configureAddrs(link netlink.Link, r SetupRequest) error {
	name := link.Attrs().Name
	for _, p := range r.IPs {
		addr := &netlink.Addr{IPNet: prefixToIPNet(p)}
		if p.Addr().Is6() {
			if err := enableIPv6(name); err != nil {
				return err
			}
			addr.Flags = unix.IFA_F_NODAD
		}
		if err := netlink.AddrAdd(link, addr); err != nil {
			return fmt.Errorf("add address %s to %s: %w", p, name, err)
		}
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("set %s up: %w", name, err)
	}
	if !r.NoDefaultRoute {
		for _, gw := range defaultGateways(r.Gateways) {
			if err := addDefaultRoute(link, gw, r.IPs); err != nil {
				return err
			}
		}
	}
	for _, rt := range r.Routes {
		if err := addRoute(link, rt, r.IPs); err != nil {
			return err
		}
	}
	return nil
}

func addRoute(link netlink.Link, rt Route, ips []netip.Prefix) error {
	route := &netlink.Route{LinkIndex: link.Attrs().Index, Dst: prefixToIPNet(rt.Dst)}
	if rt.GW.IsValid() {
		route.Gw = net.IP(rt.GW.Unmap().AsSlice())
		if !onLink(rt.GW, ips) {
			route.Flags = int(netlink.FLAG_ONLINK)
		}
	}
	if err := netlink.RouteReplace(route); err != nil {
		return fmt.Errorf("add route to %s via %v on %s: %w", rt.Dst, rt.GW, link.Attrs().Name, err)
	}
	return nil
}

// enableIPv6 turns IPv6 on for the pod's interface without router advertisements or SLAAC,
// as Kube-OVN leaves them off on the pod side: the pod's addresses and default route are
// the allocated ones, whatever a router on the switch announces. Set before the link is up,
// so no advertisement is taken in between.
func enableIPv6(name string) error {
	for _, kv := range [][2]string{{"accept_ra", "0"}, {"autoconf", "0"}, {"disable_ipv6", "0"}} {
		if _, err := sysctl.Sysctl(fmt.Sprintf("net/ipv6/conf/%s/%s", name, kv[0]), kv[1]); err != nil {
			return fmt.Errorf("set ipv6 %s %s on %s: %w", kv[0], kv[1], name, err)
		}
	}
	return nil
}

// defaultGateways keeps the first gateway of each family.
func defaultGateways(gws []netip.Addr) []netip.Addr {
	var out []netip.Addr
	var seen4, seen6 bool
	for _, gw := range gws {
		gw = gw.Unmap()
		switch {
		case !gw.IsValid():
		case gw.Is4() && !seen4:
			seen4 = true
			out = append(out, gw)
		case gw.Is6() && !seen6:
			seen6 = true
			out = append(out, gw)
		}
	}
	return out
}

func addDefaultRoute(link netlink.Link, gw netip.Addr, ips []netip.Prefix) error {
	dst := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
	if gw.Is6() {
		dst = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
	}
	route := &netlink.Route{
		LinkIndex: link.Attrs().Index,
		Dst:       prefixToIPNet(dst),
		Gw:        net.IP(gw.AsSlice()),
	}
	if !onLink(gw, ips) {
		// A gateway outside the pod's subnets is still reached through the pod's only link.
		route.Flags = int(netlink.FLAG_ONLINK)
	}
	if err := netlink.RouteReplace(route); err != nil {
		return fmt.Errorf("add default route via %s on %s: %w", gw, link.Attrs().Name, err)
	}
	return nil
}

func onLink(gw netip.Addr, ips []netip.Prefix) bool {
	for _, p := range ips {
		if p.Masked().Contains(gw) {
			return true
		}
	}
	return false
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	a := p.Addr().Unmap()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}
