package hostnet

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
)

// ensureRoutes leaves exactly one route per prefix in spec.Routes via spec.Gateway through
// the link, with the join address as source, among the link's IPv4 main-table routes that
// have a gateway. Routes without a gateway (the kernel's connected route) are not ours.
func ensureRoutes(_ context.Context, spec Spec, log *slog.Logger) error {
	link, err := netlinksafe.LinkByName(spec.Interface)
	if err != nil {
		return fmt.Errorf("look up interface %s: %w", spec.Interface, err)
	}
	routes, err := netlinksafe.RouteList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list routes through %s: %w", spec.Interface, err)
	}
	var have []netip.Prefix
	for _, r := range routes {
		if r.Gw == nil {
			continue
		}
		if dst, ok := isWanted(r, spec); ok && !slices.Contains(have, dst) {
			have = append(have, dst)
			continue
		}
		if err := netlink.RouteDel(&r); err != nil {
			return fmt.Errorf("remove stale route %s via %s dev %s: %w", r.Dst, r.Gw, spec.Interface, err)
		}
		log.Info("removed stale route through host interface", "dst", fmt.Sprint(r.Dst), "via", r.Gw.String())
	}
	for _, dst := range spec.Routes {
		if slices.Contains(have, dst) {
			continue
		}
		have = append(have, dst)
		r := &netlink.Route{
			LinkIndex: link.Attrs().Index,
			Dst:       prefixToIPNet(dst),
			Gw:        net.IP(spec.Gateway.AsSlice()),
			Src:       net.IP(spec.Address.Addr().AsSlice()),
		}
		if err := netlink.RouteReplace(r); err != nil {
			return fmt.Errorf("add route %s via %s dev %s: %w", dst, spec.Gateway, spec.Interface, err)
		}
		log.Info("added route through host interface", "dst", dst.String(), "via", spec.Gateway.String())
	}
	return nil
}

// isWanted reports whether r is one of the routes spec asks for, and to which prefix.
func isWanted(r netlink.Route, spec Spec) (netip.Prefix, bool) {
	if r.Dst == nil || r.Priority != 0 || r.Tos != 0 || len(r.MultiPath) > 0 {
		return netip.Prefix{}, false
	}
	dst, ok := ipNetToPrefix(r.Dst)
	gw, gwOK := netip.AddrFromSlice(r.Gw)
	src, srcOK := netip.AddrFromSlice(r.Src)
	if !ok || !gwOK || !srcOK || !slices.Contains(spec.Routes, dst) {
		return netip.Prefix{}, false
	}
	return dst, gw.Unmap() == spec.Gateway && src.Unmap() == spec.Address.Addr()
}
