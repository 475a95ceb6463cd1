package hostnet

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// ensureAddress leaves spec.Address as the link's only IPv4 address and, when the spec has
// one, spec.Address6 as its only global IPv6 address (link-local addresses are the kernel's
// and stay; without Address6 IPv6 is left alone). Stale addresses go first: deleting a
// primary address also deletes the secondaries of its subnet, which the new address would be
// when it shares the old one's prefix.
func ensureAddress(_ context.Context, spec Spec, log *slog.Logger) error {
	link, err := netlinksafe.LinkByName(spec.Interface)
	if err != nil {
		return fmt.Errorf("look up interface %s: %w", spec.Interface, err)
	}
	if err := ensureFamilyAddress(link, spec.Address, netlink.FAMILY_V4, log); err != nil {
		return err
	}
	if !spec.Address6.IsValid() {
		return nil
	}
	if err := enableIPv6(spec.Interface); err != nil {
		return err
	}
	return ensureFamilyAddress(link, spec.Address6, netlink.FAMILY_V6, log)
}

// ensureFamilyAddress leaves want (invalid: none) as the link's only address of family.
func ensureFamilyAddress(link netlink.Link, want netip.Prefix, family int, log *slog.Logger) error {
	name := link.Attrs().Name
	addrs, err := netlinksafe.AddrList(link, family)
	if err != nil {
		return fmt.Errorf("list addresses of %s: %w", name, err)
	}
	have := false
	for _, a := range addrs {
		p, ok := ipNetToPrefix(a.IPNet)
		if ok && p.Addr().IsLinkLocalUnicast() && family == netlink.FAMILY_V6 {
			continue
		}
		if ok && p == want {
			have = true
			continue
		}
		if err := netlink.AddrDel(link, &a); err != nil {
			return fmt.Errorf("remove stale address %s from %s: %w", a.IPNet, name, err)
		}
		log.Info("removed stale address from host interface", "ip", a.IPNet.String())
	}
	if have || !want.IsValid() {
		return nil
	}
	addr := &netlink.Addr{IPNet: prefixToIPNet(want)}
	if want.Addr().Is6() {
		// OVN owns the join network's address plan: duplicate address detection would only
		// keep the address tentative, unusable as the routes' source, for about a second.
		addr.Flags = unix.IFA_F_NODAD
	}
	if err := netlink.AddrAdd(link, addr); err != nil {
		return fmt.Errorf("add address %s to %s: %w", want, name, err)
	}
	log.Info("added address to host interface", "ip", want.String())
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
