package hostnet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// RouteProtocol is the routing protocol number (rtm_protocol, `ip route ... proto 211`) on
// every route edgeovn installs. It acts on no route without it: it is how a route is known
// to be edgeovn's. 211 is unassigned in iproute2's rt_protos and in the routing daemons' and
// CNIs' numbers known to us.
const RouteProtocol netlink.RouteProtocol = 211

// RouteConflict is a prefix edgeovn wanted to route through its interface and did not:
// a route it does not own is in the way.
type RouteConflict struct {
	Dst    netip.Prefix // the prefix edgeovn wanted
	Theirs string       // the route or address in the way, as `ip route` would show it
}

func (c RouteConflict) String() string {
	return fmt.Sprintf("%s (overlaps %s)", c.Dst, c.Theirs)
}

// ConflictError reports the routes Ensure left out because a route it does not own covers
// the same addresses. Everything else was applied: callers report it, not retry it.
type ConflictError struct{ Conflicts []RouteConflict }

func (e *ConflictError) Error() string {
	parts := make([]string, len(e.Conflicts))
	for i, c := range e.Conflicts {
		parts[i] = c.String()
	}
	return "routes not installed, a route or address edgeovn does not own is in the way: " + strings.Join(parts, "; ")
}

// ensureRoutes leaves exactly one edgeovn route (RouteProtocol) per prefix in spec.Routes via
// its family's join gateway through the link, with that family's join address as source. Routes without
// RouteProtocol are never replaced, changed or deleted, with one exception: a route of an
// earlier edgeovn version (through the link, via spec.Gateway, proto boot) is adopted, that
// is removed and installed again with RouteProtocol. A wanted prefix that overlaps any other
// main-table route but a default route is not installed; it is
// returned in a *ConflictError after everything else is applied.
func ensureRoutes(_ context.Context, spec Spec, log *slog.Logger) error {
	link, err := netlinksafe.LinkByName(spec.Interface)
	if err != nil {
		return fmt.Errorf("look up interface %s: %w", spec.Interface, err)
	}
	idx := link.Attrs().Index
	routes, err := netlinksafe.RouteListFiltered(netlink.FAMILY_ALL, &netlink.Route{Table: unix.RT_TABLE_MAIN}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list main-table routes: %w", err)
	}
	var have []netip.Prefix
	var others []netlink.Route
	for _, r := range routes {
		legacy := isLegacy(r, spec, idx)
		if r.LinkIndex != idx || r.Protocol != RouteProtocol && !legacy {
			others = append(others, r)
			continue
		}
		if dst, ok := isWanted(r, spec); ok && !legacy && !slices.Contains(have, dst) {
			have = append(have, dst)
			continue
		}
		if err := netlink.RouteDel(&r); err != nil {
			return fmt.Errorf("remove stale route %s via %s dev %s: %w", r.Dst, r.Gw, spec.Interface, err)
		}
		if legacy {
			log.Info("adopted route of an earlier edgeovn version: removed, installed again as edgeovn's if still wanted", "dst", fmt.Sprint(r.Dst), "via", r.Gw.String())
			continue
		}
		log.Info("removed stale route through host interface", "dst", fmt.Sprint(r.Dst), "via", r.Gw.String())
	}
	var conflicts []RouteConflict
	for _, dst := range spec.Routes {
		if slices.Contains(have, dst) {
			continue
		}
		if c, ok := routeConflict(dst, others); ok {
			conflicts = append(conflicts, c)
			continue
		}
		have = append(have, dst)
		if err := addRoute(idx, dst, spec); errors.Is(err, syscall.EEXIST) {
			conflicts = append(conflicts, RouteConflict{Dst: dst, Theirs: "a route the kernel holds for " + dst.String()})
			continue
		} else if err != nil {
			return err
		}
		gw, _ := spec.gatewayFor(dst)
		log.Info("added route through host interface", "dst", dst.String(), "via", gw.String())
	}
	if len(conflicts) > 0 {
		return &ConflictError{Conflicts: conflicts}
	}
	return nil
}

// addRoute adds, never replaces: RouteReplace would take the place of any route with the same
// destination, table, tos and priority, whoever made it.
func addRoute(idx int, dst netip.Prefix, spec Spec) error {
	gw, src := spec.gatewayFor(dst)
	r := &netlink.Route{
		LinkIndex: idx,
		Dst:       prefixToIPNet(dst),
		Gw:        net.IP(gw.AsSlice()),
		Src:       net.IP(src.Addr().AsSlice()),
		Protocol:  RouteProtocol,
	}
	if err := netlink.RouteAdd(r); err != nil {
		return fmt.Errorf("add route %s via %s dev %s: %w", dst, gw, spec.Interface, err)
	}
	return nil
}

// isLegacy reports whether r is a route an earlier edgeovn version installed: through the
// link, via the join gateway, with the default protocol (boot) the netlink library gave it.
func isLegacy(r netlink.Route, spec Spec, idx int) bool {
	gw, ok := netip.AddrFromSlice(r.Gw)
	return r.LinkIndex == idx && r.Protocol == unix.RTPROT_BOOT && ok && gw.Unmap() == spec.Gateway && spec.Gateway.IsValid()
}

// routeConflict finds a route edgeovn does not own whose destination overlaps dst (default
// routes excepted: every more specific route is meant to win over them). A host address
// with a prefix has its connected route here; a lone /32 (a VIP, kube-proxy's ClusterIPs on
// kube-ipvs0) is delivered by the local table, which a route through ovn0 does not change.
func routeConflict(dst netip.Prefix, others []netlink.Route) (RouteConflict, bool) {
	for _, r := range others {
		p, ok := routeDst(r)
		if !ok || p.Bits() == 0 || !p.Overlaps(dst) {
			continue
		}
		return RouteConflict{Dst: dst, Theirs: describeRoute(r, p)}, true
	}
	return RouteConflict{}, false
}

func routeDst(r netlink.Route) (netip.Prefix, bool) {
	if r.Dst == nil && r.Family == netlink.FAMILY_V6 {
		return netip.PrefixFrom(netip.IPv6Unspecified(), 0), true
	}
	if r.Dst == nil {
		return netip.PrefixFrom(netip.IPv4Unspecified(), 0), true
	}
	p, ok := ipNetToPrefix(r.Dst)
	return p.Masked(), ok
}

func describeRoute(r netlink.Route, dst netip.Prefix) string {
	s := dst.String()
	if gw, ok := netip.AddrFromSlice(r.Gw); ok {
		s += " via " + gw.Unmap().String()
	}
	if l, err := netlink.LinkByIndex(r.LinkIndex); err == nil {
		s += " dev " + l.Attrs().Name
	}
	return s + " proto " + r.Protocol.String()
}

// ip6DefaultMetric is the metric the kernel gives an IPv6 route added without one.
const ip6DefaultMetric = 1024

// isWanted reports whether r is one of the routes spec asks for, and to which prefix.
func isWanted(r netlink.Route, spec Spec) (netip.Prefix, bool) {
	metricOK := r.Priority == 0 || r.Family == netlink.FAMILY_V6 && r.Priority == ip6DefaultMetric
	if r.Dst == nil || !metricOK || r.Tos != 0 || len(r.MultiPath) > 0 {
		return netip.Prefix{}, false
	}
	dst, ok := ipNetToPrefix(r.Dst)
	gw, gwOK := netip.AddrFromSlice(r.Gw)
	src, srcOK := netip.AddrFromSlice(r.Src)
	if !ok || !gwOK || !srcOK || !slices.Contains(spec.Routes, dst) {
		return netip.Prefix{}, false
	}
	wantGW, wantSrc := spec.gatewayFor(dst)
	return dst, gw.Unmap() == wantGW && src.Unmap() == wantSrc.Addr()
}
