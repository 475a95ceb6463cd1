package kubeovn

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/ipam"
)

// Network is a Subnet's address space as its spec describes it.
type Network struct {
	CIDRs    []netip.Prefix // IPv4 first; one per family
	Gateways []netip.Addr   // one per CIDR, in its order
	Excludes []ipam.Range
}

// ErrInvalidSpec marks a Subnet spec that does not describe a network.
var ErrInvalidSpec = errors.New("invalid subnet spec")

// ParseNetwork reads cidrBlock ("10.66.0.0/16", or "10.16.0.0/16,fd00:10:16::/64" for dual
// stack), gateway (one per family; default: each CIDR's first address, as Kube-OVN),
// excludeIps (addresses and "a..b" ranges) and protocol (checked against the CIDRs' families).
// A CIDR with host bits set is taken as its network, as Kube-OVN does.
func ParseNetwork(spec SubnetSpec) (Network, error) {
	var n Network
	cidrs, err := parseCIDRs(spec.CIDRBlock)
	if err != nil {
		return Network{}, err
	}
	n.CIDRs = cidrs
	if err := checkProtocol(spec.Protocol, cidrs); err != nil {
		return Network{}, err
	}
	if n.Gateways, err = parseGateways(spec.Gateway, cidrs); err != nil {
		return Network{}, err
	}
	for _, s := range spec.ExcludeIps {
		r, err := ipam.ParseRange(s)
		if err != nil {
			return Network{}, fmt.Errorf("%w: excludeIps %q: %w", ErrInvalidSpec, s, err)
		}
		if !slices.ContainsFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(r.First) && p.Contains(r.Last) }) {
			return Network{}, fmt.Errorf("%w: excludeIps %q is outside cidrBlock %s", ErrInvalidSpec, s, spec.CIDRBlock)
		}
		n.Excludes = append(n.Excludes, r)
	}
	return n, nil
}

// CIDRs reads only cidrBlock: what the node role routes. A refused change to another field
// (an excludeIps entry that does not parse) must not withdraw an applied subnet's route.
func CIDRs(spec SubnetSpec) ([]netip.Prefix, error) { return parseCIDRs(spec.CIDRBlock) }

func parseCIDRs(block string) ([]netip.Prefix, error) {
	if strings.TrimSpace(block) == "" {
		return nil, fmt.Errorf("%w: cidrBlock is empty", ErrInvalidSpec)
	}
	var out []netip.Prefix
	for _, s := range strings.Split(block, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%w: cidrBlock %q: %w", ErrInvalidSpec, block, err)
		}
		out = append(out, p.Masked())
	}
	switch {
	case len(out) > 2:
		return nil, fmt.Errorf("%w: cidrBlock %q: at most one CIDR per family", ErrInvalidSpec, block)
	case len(out) == 2 && out[0].Addr().Is4() == out[1].Addr().Is4():
		return nil, fmt.Errorf("%w: cidrBlock %q: two CIDRs of one family", ErrInvalidSpec, block)
	case len(out) == 2 && out[0].Addr().Is6():
		out[0], out[1] = out[1], out[0]
	}
	return out, nil
}

func checkProtocol(protocol string, cidrs []netip.Prefix) error {
	got := ProtocolIPv4
	switch {
	case len(cidrs) == 2:
		got = ProtocolDual
	case cidrs[0].Addr().Is6():
		got = ProtocolIPv6
	}
	if protocol != "" && protocol != got {
		return fmt.Errorf("%w: protocol %s does not match cidrBlock (%s)", ErrInvalidSpec, protocol, got)
	}
	return nil
}

func parseGateways(gateway string, cidrs []netip.Prefix) ([]netip.Addr, error) {
	out := make([]netip.Addr, len(cidrs))
	if strings.TrimSpace(gateway) == "" {
		for i, p := range cidrs {
			out[i] = p.Addr().Next()
		}
		return out, nil
	}
	parts := strings.Split(gateway, ",")
	if len(parts) != len(cidrs) {
		return nil, fmt.Errorf("%w: gateway %q: want one address per CIDR of %v", ErrInvalidSpec, gateway, cidrs)
	}
	for _, s := range parts {
		gw, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%w: gateway %q: %w", ErrInvalidSpec, gateway, err)
		}
		i := slices.IndexFunc(cidrs, func(p netip.Prefix) bool { return p.Contains(gw) })
		if i < 0 {
			return nil, fmt.Errorf("%w: gateway %s is outside cidrBlock %v", ErrInvalidSpec, gw, cidrs)
		}
		if gw == cidrs[i].Addr() && cidrs[i].Bits() < gw.BitLen()-1 {
			return nil, fmt.Errorf("%w: gateway %s is the network address of %s", ErrInvalidSpec, gw, cidrs[i])
		}
		out[i] = gw
	}
	return out, nil
}

// Overlaps reports the first CIDR of a that overlaps one of b, if any.
func Overlaps(a, b []netip.Prefix) (netip.Prefix, netip.Prefix, bool) {
	for _, x := range a {
		for _, y := range b {
			if x.Overlaps(y) {
				return x, y, true
			}
		}
	}
	return netip.Prefix{}, netip.Prefix{}, false
}

// ParseAllowSubnets reads allowSubnets, the CIDRs a private Subnet accepts traffic from (and
// sends to) besides its own. Every entry must be a CIDR, whether the Subnet is private or not,
// as Kube-OVN validates it; host bits are dropped. The first entry that is not a CIDR is named
// in the error.
func ParseAllowSubnets(spec SubnetSpec) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(spec.AllowSubnets))
	for _, s := range spec.AllowSubnets {
		p, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%w: allowSubnets entry %q is not a CIDR: %w", ErrInvalidSpec, s, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
