package netfamily

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// ErrInvalid is what every refusal wraps.
var ErrInvalid = errors.New("invalid network")

// Error is a refusal: its text names the field and the value (callers add what they check,
// "invalid subnet spec: ..."), and it wraps ErrInvalid and any cause.
type Error struct{ err error }

func (e *Error) Error() string { return e.err.Error() }

// Unwrap gives ErrInvalid and the cause.
func (e *Error) Unwrap() []error { return []error{ErrInvalid, e.err} }

func invalid(format string, args ...any) error { return &Error{fmt.Errorf(format, args...)} }

// Kube-OVN's protocols, derived from a network's families.
const (
	IPv4 = "IPv4"
	IPv6 = "IPv6"
	Dual = "Dual"
)

// Prefixes reads field's value s, "a" or "a,b": at most one prefix per family, host bits
// cleared, in the order written.
func Prefixes(field, s string) ([]netip.Prefix, error) {
	if strings.TrimSpace(s) == "" {
		return nil, invalid("%s is empty", field)
	}
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(f))
		if err != nil {
			return nil, invalid("%s %q: %w", field, s, err)
		}
		if p.Addr().Zone() != "" || p.Addr().Is4In6() {
			return nil, invalid("%s %q: %s is not a plain IPv4 or IPv6 prefix", field, s, p)
		}
		out = append(out, p.Masked())
	}
	switch {
	case len(out) > 2:
		return nil, invalid("%s %q: at most one CIDR per family", field, s)
	case len(out) == 2 && out[0].Addr().Is4() == out[1].Addr().Is4():
		return nil, invalid("%s %q: two CIDRs of one family", field, s)
	}
	return out, nil
}

// Gateways reads field's value s, one address per prefix of cidrs (field of's value) and in
// their order (as Kube-OVN writes "10.16.0.1,fd00:10:16::1" for
// "10.16.0.0/16,fd00:10:16::/64"); empty s gives each prefix its first address.
func Gateways(field, s, of string, cidrs []netip.Prefix) ([]netip.Addr, error) {
	out := make([]netip.Addr, len(cidrs))
	if strings.TrimSpace(s) == "" {
		for i, p := range cidrs {
			out[i] = p.Masked().Addr().Next()
		}
		return out, nil
	}
	parts := strings.Split(s, ",")
	if len(parts) != len(cidrs) {
		return nil, invalid("%s %q: want one address per CIDR of %v, in its order", field, s, cidrs)
	}
	for i, f := range parts {
		gw, err := netip.ParseAddr(strings.TrimSpace(f))
		if err != nil {
			return nil, invalid("%s %q: %w", field, s, err)
		}
		if gw.Is4() != cidrs[i].Addr().Is4() {
			return nil, invalid("%s %q: entry %d, %s, is %s but CIDR %d, %s, is %s: want one address per CIDR of %v, in its order",
				field, s, i+1, gw, family(gw), i+1, cidrs[i], family(cidrs[i].Addr()), cidrs)
		}
		if err := CheckGateway(field, of, cidrs[i], gw); err != nil {
			return nil, err
		}
		out[i] = gw
	}
	return out, nil
}

// CheckGateway refuses a gateway (field) outside cidr (field of) or at its network address
// (but on /31, /127 and single-address prefixes, where there is no other).
func CheckGateway(field, of string, cidr netip.Prefix, gw netip.Addr) error {
	switch {
	case !gw.IsValid():
		return invalid("%s: missing or invalid", field)
	case !cidr.Contains(gw):
		return invalid("%s %s is outside %s %s", field, gw, of, cidr)
	case gw == cidr.Masked().Addr() && cidr.Bits() < gw.BitLen()-1:
		return invalid("%s %s is the network address of %s", field, gw, cidr)
	}
	return nil
}

// Sort orders a network IPv4 first, its gateways (one per prefix, or none) with it.
func Sort(cidrs []netip.Prefix, gws []netip.Addr) ([]netip.Prefix, []netip.Addr) {
	cidrs, gws = slices.Clone(cidrs), slices.Clone(gws)
	if len(cidrs) == 2 && cidrs[0].Addr().Is6() {
		cidrs[0], cidrs[1] = cidrs[1], cidrs[0]
		if len(gws) == 2 {
			gws[0], gws[1] = gws[1], gws[0]
		}
	}
	return cidrs, gws
}

// Protocol is Kube-OVN's protocol of a network of these prefixes: IPv4, IPv6 or Dual.
func Protocol(cidrs []netip.Prefix) string {
	switch {
	case len(cidrs) == 2:
		return Dual
	case len(cidrs) == 1 && cidrs[0].Addr().Is6():
		return IPv6
	}
	return IPv4
}

// Families names the families of ps in order, "IPv4", "IPv6" or "IPv4,IPv6".
func Families(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = family(p.Addr())
	}
	return strings.Join(s, ",")
}

func family(a netip.Addr) string {
	if a.Is4() {
		return IPv4
	}
	return IPv6
}
