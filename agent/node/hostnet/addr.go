package hostnet

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
)

// ensureAddress leaves spec.Address as the link's only IPv4 address. Stale addresses go
// first: deleting a primary address also deletes the secondaries of its subnet, which the
// new address would be when it shares the old one's prefix.
func ensureAddress(_ context.Context, spec Spec, log *slog.Logger) error {
	link, err := netlinksafe.LinkByName(spec.Interface)
	if err != nil {
		return fmt.Errorf("look up interface %s: %w", spec.Interface, err)
	}
	addrs, err := netlinksafe.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list addresses of %s: %w", spec.Interface, err)
	}
	have := false
	for _, a := range addrs {
		p, ok := ipNetToPrefix(a.IPNet)
		if ok && p == spec.Address {
			have = true
			continue
		}
		if err := netlink.AddrDel(link, &a); err != nil {
			return fmt.Errorf("remove stale address %s from %s: %w", a.IPNet, spec.Interface, err)
		}
		log.Info("removed stale address from host interface", "ip", a.IPNet.String())
	}
	if have {
		return nil
	}
	if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: prefixToIPNet(spec.Address)}); err != nil {
		return fmt.Errorf("add address %s to %s: %w", spec.Address, spec.Interface, err)
	}
	log.Info("added address to host interface", "ip", spec.Address.String())
	return nil
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	a := p.Addr().Unmap()
	return &net.IPNet{IP: net.IP(a.AsSlice()), Mask: net.CIDRMask(p.Bits(), a.BitLen())}
}

// ipNetToPrefix keeps the host bits (an interface address, not a network).
func ipNetToPrefix(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a.Unmap(), ones), true
}
