package podnet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/containernetworking/plugins/pkg/ns"
	"github.com/vishvananda/netlink"
)

// CheckRequest names the wiring Check expects to find.
type CheckRequest struct {
	Netns      string
	IfName     string
	HostIfName string
	IPs        []netip.Prefix // each must be on the pod end, with this prefix length
	// DisableTxChecksum also requires TX checksum offload to be off on the pod end.
	DisableTxChecksum bool
}

// Check verifies that the host end exists and is up, and that the pod end exists in the pod's
// namespace with every expected address. Differences wrap ErrMismatch.
func Check(ctx context.Context, r CheckRequest) error {
	if r.Netns == "" || r.IfName == "" || r.HostIfName == "" {
		return fmt.Errorf("check %q/%q in %q: %w", r.HostIfName, r.IfName, r.Netns, ErrInvalidRequest)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("check %s: %w", r.HostIfName, err)
	}
	if err := checkHostLink(r.HostIfName); err != nil {
		return err
	}
	podNS, err := openNetns(r.Netns)
	if err != nil {
		return err
	}
	defer podNS.Close()
	return podNS.Do(func(ns.NetNS) error { return checkPodIf(r) })
}

func checkHostLink(name string) error {
	link, err := netlinksafe.LinkByName(name)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return fmt.Errorf("host interface %s is missing: %w", name, ErrMismatch)
		}
		return fmt.Errorf("look up host interface %s: %w", name, err)
	}
	if link.Attrs().Flags&net.FlagUp == 0 {
		return fmt.Errorf("host interface %s is down: %w", name, ErrMismatch)
	}
	return nil
}

func checkPodIf(r CheckRequest) error {
	link, err := netlinksafe.LinkByName(r.IfName)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return fmt.Errorf("pod interface %s is missing in %s: %w", r.IfName, r.Netns, ErrMismatch)
		}
		return fmt.Errorf("look up pod interface %s: %w", r.IfName, err)
	}
	have, err := linkPrefixes(link)
	if err != nil {
		return err
	}
	for _, want := range r.IPs {
		if !have[want] {
			return fmt.Errorf("pod interface %s lacks address %s: %w", r.IfName, want, ErrMismatch)
		}
	}
	if !r.DisableTxChecksum {
		return nil
	}
	on, err := txChecksumOn(r.IfName)
	if err != nil {
		return err
	}
	if len(on) > 0 {
		return fmt.Errorf("pod interface %s has tx checksum offload on (%v): %w", r.IfName, on, ErrMismatch)
	}
	return nil
}

func linkPrefixes(link netlink.Link) (map[netip.Prefix]bool, error) {
	addrs, err := netlinksafe.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return nil, fmt.Errorf("list addresses of %s: %w", link.Attrs().Name, err)
	}
	have := make(map[netip.Prefix]bool, len(addrs))
	for _, a := range addrs {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			continue
		}
		ones, _ := a.Mask.Size()
		have[netip.PrefixFrom(ip.Unmap(), ones)] = true
	}
	return have, nil
}
