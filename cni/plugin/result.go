package plugin

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// toResult turns the daemon's ADD answer into a CNI result: interface 0 is the host end,
// interface 1 the pod end, and every address belongs to the pod end.
func toResult(a *protocol.AddResult) *types100.Result {
	podIdx := 1
	res := &types100.Result{
		CNIVersion: types100.ImplementedSpecVersion,
		Interfaces: []*types100.Interface{
			{Name: a.HostInterface.Name, Mac: a.HostInterface.MAC, Mtu: a.MTU},
			{Name: a.PodInterface.Name, Mac: a.PodInterface.MAC, Mtu: a.MTU, Sandbox: a.PodInterface.Sandbox},
		},
	}
	for _, ipc := range a.IPs {
		res.IPs = append(res.IPs, &types100.IPConfig{
			Interface: &podIdx,
			Address:   *prefixToIPNet(ipc.Address),
			Gateway:   addrToIP(ipc.Gateway),
		})
	}
	for _, r := range a.Routes {
		res.Routes = append(res.Routes, &types.Route{Dst: *prefixToIPNet(r.Dst), GW: addrToIP(r.GW)})
	}
	return res
}

// mergePrev appends own to the result of the plugins before this one in the chain, as the
// spec asks of a plugin that receives a prevResult: earlier interfaces, addresses, routes
// and DNS stay, and own's interface indexes move past the earlier interfaces.
func mergePrev(prev types.Result, own *types100.Result) (*types100.Result, error) {
	if prev == nil {
		return own, nil
	}
	p, err := types100.NewResultFromResult(prev)
	if err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "convert prevResult", err.Error())
	}
	offset := len(p.Interfaces)
	p.Interfaces = append(p.Interfaces, own.Interfaces...)
	for _, ipc := range own.IPs {
		c := *ipc
		if c.Interface != nil {
			idx := *c.Interface + offset
			c.Interface = &idx
		}
		p.IPs = append(p.IPs, &c)
	}
	p.Routes = append(p.Routes, own.Routes...)
	return p, nil
}

// expectedIPs returns the addresses prevResult assigns to the interface ifName inside a
// sandbox, which CHECK asks the daemon to verify.
func expectedIPs(prev types.Result, ifName string) ([]netip.Prefix, error) {
	if prev == nil {
		return nil, types.NewError(types.ErrInvalidNetworkConfig, "CHECK needs a prevResult", "the runtime passed none")
	}
	p, err := types100.NewResultFromResult(prev)
	if err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "convert prevResult", err.Error())
	}
	var out []netip.Prefix
	for _, ipc := range p.IPs {
		if ipc.Interface == nil || *ipc.Interface < 0 || *ipc.Interface >= len(p.Interfaces) {
			continue
		}
		iface := p.Interfaces[*ipc.Interface]
		if iface.Name != ifName || iface.Sandbox == "" {
			continue
		}
		pfx, err := ipNetToPrefix(ipc.Address)
		if err != nil {
			return nil, types.NewError(types.ErrDecodingFailure, "parse prevResult address", err.Error())
		}
		out = append(out, pfx)
	}
	if len(out) == 0 {
		return nil, types.NewError(types.ErrInvalidNetworkConfig,
			fmt.Sprintf("prevResult has no address on sandbox interface %s", ifName), "")
	}
	return out, nil
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	a := p.Addr().Unmap()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}

func addrToIP(a netip.Addr) net.IP {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.Unmap().AsSlice())
}

func ipNetToPrefix(n net.IPNet) (netip.Prefix, error) {
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, fmt.Errorf("address %v is not an IP", n.IP)
	}
	ones, bits := n.Mask.Size()
	a = a.Unmap()
	if bits != a.BitLen() {
		return netip.Prefix{}, fmt.Errorf("mask of %v does not fit its address", n.String())
	}
	return netip.PrefixFrom(a, ones), nil
}
