package hostnet

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// MoveRequest moves the host's addresses and routes from one interface to another: a NIC's
// to its provider bridge when the bridge takes the NIC, and back when it gives it up.
type MoveRequest struct {
	From, To string
	// CopyMTU gives To the MTU of From (the bridge follows its NIC).
	CopyMTU bool
	// NoDAD turns IPv6 duplicate address detection off on To (a provider bridge, edgeovn's
	// own device): its link-local address would be tentative as well as the moved ones.
	NoDAD bool
	Log   *slog.Logger
}

// Moved says what MoveAddrs did.
type Moved struct {
	Addrs, Routes int
	MTU           int // From's MTU
}

// MoveAddrs moves From's addresses (not link-local ones) and the routes through it to To,
// in an order that keeps the host reachable: To is brought up and given the addresses while
// From still has them, the routes are replaced to go through To (link-scope routes first, so
// that a gateway is reachable when the route through it is added), and only then are the
// addresses taken off From, which keeps its up state. Routes the kernel made for an address
// (proto kernel) come back by themselves with the address. Calling it again when From has no
// address left changes nothing.
func MoveAddrs(_ context.Context, req MoveRequest) (Moved, error) {
	from, err := netlink.LinkByName(req.From)
	if err != nil {
		return Moved{}, fmt.Errorf("move addresses from %s: %w", req.From, err)
	}
	to, err := netlink.LinkByName(req.To)
	if err != nil {
		return Moved{}, fmt.Errorf("move addresses to %s: %w", req.To, err)
	}
	out := Moved{MTU: from.Attrs().MTU}
	if req.CopyMTU && to.Attrs().MTU != out.MTU {
		if err := netlink.LinkSetMTU(to, out.MTU); err != nil {
			return out, fmt.Errorf("set mtu %d on %s: %w", out.MTU, req.To, err)
		}
	}
	if to.Attrs().Flags&unix.IFF_UP == 0 {
		if err := netlink.LinkSetUp(to); err != nil {
			return out, fmt.Errorf("set %s up: %w", req.To, err)
		}
	}
	addrs, err := movableAddrs(from)
	if err != nil || len(addrs) == 0 {
		return out, err
	}
	if req.NoDAD {
		noDAD(req.To)
	}
	routes, err := movableRoutes(from)
	if err != nil {
		return out, err
	}
	for _, a := range addrs {
		b := a
		b.Label, b.LinkIndex, b.PreferedLft, b.ValidLft = "", 0, 0, 0
		if b.IP.To4() == nil {
			b.Flags |= unix.IFA_F_NODAD // it passed duplicate detection on From, on the same LAN
		}
		if err := netlink.AddrReplace(to, &b); err != nil {
			return out, fmt.Errorf("add address %s to %s: %w", a.IPNet, req.To, err)
		}
	}
	for _, r := range routes {
		r.LinkIndex = to.Attrs().Index
		if err := netlink.RouteReplace(&r); err != nil {
			return out, fmt.Errorf("move route %s to %s: %w", r, req.To, err)
		}
		out.Routes++
	}
	for _, a := range addrs {
		if err := netlink.AddrDel(from, &a); err != nil {
			return out, fmt.Errorf("remove address %s from %s: %w", a.IPNet, req.From, err)
		}
		out.Addrs++
	}
	if req.Log != nil {
		req.Log.Info("host addresses and routes moved", "from", req.From, "to", req.To, "addresses", out.Addrs, "routes", out.Routes)
	}
	return out, nil
}

// noDAD turns IPv6 duplicate address detection off on name: the addresses moved there passed
// it on the NIC, on the same LAN, and while they are tentative the host cannot use them (its
// IPv6 through the moved routes stopped for seconds: 26 of 53 pings lost).
func noDAD(name string) {
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+name+"/accept_dad", []byte("0"), 0o644)
}

// LinkMTU is the interface's MTU; false when there is no such interface.
func LinkMTU(name string) (int, bool) {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return 0, false
	}
	return l.Attrs().MTU, true
}

func movableAddrs(l netlink.Link) ([]netlink.Addr, error) {
	addrs, err := netlink.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("list addresses of %s: %w", l.Attrs().Name, err)
	}
	return slices.DeleteFunc(addrs, func(a netlink.Addr) bool { return a.IP.IsLinkLocalUnicast() }), nil
}

// movableRoutes are the main-table routes through l that the kernel did not make for an
// address, link-scope ones first.
func movableRoutes(l netlink.Link) ([]netlink.Route, error) {
	routes, err := netlink.RouteList(l, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("list routes of %s: %w", l.Attrs().Name, err)
	}
	routes = slices.DeleteFunc(routes, func(r netlink.Route) bool {
		return r.Protocol == unix.RTPROT_KERNEL || r.Dst != nil && r.Gw == nil && r.Dst.IP.IsLinkLocalUnicast()
	})
	slices.SortStableFunc(routes, func(a, b netlink.Route) int { return int(b.Scope) - int(a.Scope) })
	return routes, nil
}

// LinkMAC is the interface's MAC; nil when there is no such interface.
func LinkMAC(name string) net.HardwareAddr {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return nil
	}
	return l.Attrs().HardwareAddr
}

// WaitMAC waits until the interface has the MAC (ovs-vswitchd sets a bridge's a moment after
// it made the device), at most ctx's time.
func WaitMAC(ctx context.Context, name string, mac net.HardwareAddr) error {
	for !bytes.Equal(LinkMAC(name), mac) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to have mac %s (has %s): %w", name, mac, LinkMAC(name), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// VlanSubinterfaces are the host's VLAN subinterfaces a provider network asks to keep
// (Kube-OVN's spec.vlanInterfaces and preserveVlanInterfaces): the named ones that exist and,
// with detect, every VLAN link whose parent is nic.
func VlanSubinterfaces(nic string, names []string, detect bool) []string {
	var out []string
	for _, n := range names {
		if _, err := netlink.LinkByName(n); err == nil {
			out = append(out, n)
		}
	}
	if !detect {
		return out
	}
	parent, err := netlink.LinkByName(nic)
	if err != nil {
		return out
	}
	links, err := netlink.LinkList()
	if err != nil {
		return out
	}
	for _, l := range links {
		if l.Type() == "vlan" && l.Attrs().ParentIndex == parent.Attrs().Index && !slices.Contains(out, l.Attrs().Name) {
			out = append(out, l.Attrs().Name)
		}
	}
	return out
}
