package server

import (
	"net/netip"

	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// addResult describes the wiring to the binary: each address with its family's gateway, and
// one default route per family that has a gateway.
func addResult(req protocol.PodRequest, res podnet.Result, pn PodNetwork) *protocol.AddResult {
	out := &protocol.AddResult{
		HostInterface: protocol.Interface{Name: res.HostIf, MAC: res.HostIfMAC.String()},
		PodInterface:  protocol.Interface{Name: res.PodIf, MAC: res.PodIfMAC.String(), Sandbox: req.Netns},
		MTU:           res.MTU,
	}
	for _, p := range pn.IPs {
		out.IPs = append(out.IPs, protocol.IPConfig{Address: p, Gateway: gatewayFor(p.Addr(), pn.Gateways)})
	}
	for _, rt := range pn.Routes {
		out.Routes = append(out.Routes, protocol.Route{Dst: rt.Dst, GW: rt.GW})
	}
	if pn.NoDefaultRoute {
		return out
	}
	var seen4, seen6 bool
	for _, gw := range pn.Gateways {
		gw = gw.Unmap()
		switch {
		case gw.Is4() && !seen4:
			seen4 = true
			out.Routes = append(out.Routes, protocol.Route{Dst: netip.PrefixFrom(netip.IPv4Unspecified(), 0), GW: gw})
		case gw.Is6() && !seen6:
			seen6 = true
			out.Routes = append(out.Routes, protocol.Route{Dst: netip.PrefixFrom(netip.IPv6Unspecified(), 0), GW: gw})
		}
	}
	return out
}

func gatewayFor(a netip.Addr, gws []netip.Addr) netip.Addr {
	for _, gw := range gws {
		if gw.Unmap().Is4() == a.Unmap().Is4() {
			return gw.Unmap()
		}
	}
	return netip.Addr{}
}
