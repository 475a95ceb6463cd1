package kubeovn

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/netfamily"
)

// Network is a Subnet's address space as its spec describes it.
type Network struct {
	CIDRs    []netip.Prefix // IPv4 first; one per family
	Gateways []netip.Addr   // one per CIDR, in its order
	Excludes []ipam.Range
	Protocol string // Kube-OVN's: IPv4, IPv6 or Dual, from the CIDRs
}

// ErrInvalidSpec marks a Subnet spec that does not describe a network.
var ErrInvalidSpec = errors.New("invalid subnet spec")

// ParseNetwork reads cidrBlock ("10.66.0.0/16", or "10.16.0.0/16,fd00:10:16::/64" for dual
// stack), gateway (one per CIDR of cidrBlock, in its order; default: each CIDR's first
// address, as Kube-OVN), excludeIps (addresses and "a..b" ranges) and protocol (derived from
// the CIDRs' families, checked against the spec's when it gives one). A CIDR with host bits
// set is taken as its network, as Kube-OVN does. The families and gateways are checked by
// ipam/netfamily, the validator the flags and the northbound share.
func ParseNetwork(spec SubnetSpec) (Network, error) {
	written, err := netfamily.Prefixes("cidrBlock", spec.CIDRBlock)
	if err != nil {
		return Network{}, invalidSpec(err)
	}
	gws, err := netfamily.Gateways("gateway", spec.Gateway, "cidrBlock", written)
	if err != nil {
		return Network{}, invalidSpec(err)
	}
	n := Network{Protocol: netfamily.Protocol(written)}
	n.CIDRs, n.Gateways = netfamily.Sort(written, gws)
	if spec.Protocol != "" && spec.Protocol != n.Protocol {
		return Network{}, fmt.Errorf("%w: protocol %s does not match cidrBlock (%s)", ErrInvalidSpec, spec.Protocol, n.Protocol)
	}
	for _, s := range spec.ExcludeIps {
		r, err := ipam.ParseRange(s)
		if err != nil {
			return Network{}, fmt.Errorf("%w: excludeIps %q: %w", ErrInvalidSpec, s, err)
		}
		if !slices.ContainsFunc(n.CIDRs, func(p netip.Prefix) bool { return p.Contains(r.First) && p.Contains(r.Last) }) {
			return Network{}, fmt.Errorf("%w: excludeIps %q is outside cidrBlock %s", ErrInvalidSpec, s, spec.CIDRBlock)
		}
		n.Excludes = append(n.Excludes, r)
	}
	return n, nil
}

// invalidSpec marks a netfamily refusal as a bad Subnet spec; its text names the field.
func invalidSpec(err error) error {
	return fmt.Errorf("%w: %w", ErrInvalidSpec, err)
}

// CIDRs reads only cidrBlock, IPv4 first: what the node role routes. A refused change to
// another field (an excludeIps entry that does not parse) must not withdraw an applied
// subnet's route.
func CIDRs(spec SubnetSpec) ([]netip.Prefix, error) {
	written, err := netfamily.Prefixes("cidrBlock", spec.CIDRBlock)
	if err != nil {
		return nil, invalidSpec(err)
	}
	cidrs, _ := netfamily.Sort(written, nil)
	return cidrs, nil
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

// IPAMOnlyProvider says whether a Subnet's provider is another plugin's network with
// Kube-OVN as its IPAM ("<nad>.<namespace>", for macvlan): its pods' interfaces are that
// plugin's, on the host's network, not OVN's. The primary ("ovn" or unset) and kube-ovn
// attachments ("<nad>.<namespace>.ovn", with ".<interface>" appended) are OVN's.
func IPAMOnlyProvider(p string) bool {
	return p != "" && p != "ovn" && !strings.HasSuffix(p, ".ovn") && !strings.Contains(p, ".ovn.")
}
