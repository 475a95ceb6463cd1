package subnetcheck

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrConflict is what every refusal wraps.
var ErrConflict = errors.New("cidr refused")

// Reserved is a network a subnet must not overlap, and what it is, for the refusal
// ("Service CIDR", "InternalIP of node n1", "host network of node n1").
type Reserved struct {
	What   string
	Prefix netip.Prefix
}

// Conflict is a refused CIDR and what it collides with.
type Conflict struct {
	CIDR netip.Prefix
	With Reserved
}

func (c *Conflict) Error() string {
	return fmt.Sprintf("cidr %s overlaps %s %s", c.CIDR, c.With.What, c.With.Prefix)
}

func (c *Conflict) Unwrap() error { return ErrConflict }

// special are the ranges no pod subnet may overlap: they do not route as unicast through
// a host.
var special = []Reserved{
	{"the unspecified / \"this network\" range", netip.MustParsePrefix("0.0.0.0/8")},
	{"the loopback range", netip.MustParsePrefix("127.0.0.0/8")},
	{"the link-local range", netip.MustParsePrefix("169.254.0.0/16")},
	{"the multicast range", netip.MustParsePrefix("224.0.0.0/4")},
	{"the reserved range (and broadcast)", netip.MustParsePrefix("240.0.0.0/4")},
	{"the unspecified address", netip.MustParsePrefix("::/128")},
	{"the loopback address", netip.MustParsePrefix("::1/128")},
	{"the IPv4-mapped range", netip.MustParsePrefix("::ffff:0:0/96")},
	{"the link-local range", netip.MustParsePrefix("fe80::/10")},
	{"the multicast range", netip.MustParsePrefix("ff00::/8")},
}

// Check returns a *Conflict for the first of cidrs that overlaps a special range or one of
// reserved (in their order), nil when none does. An invalid prefix in reserved is skipped.
func Check(cidrs []netip.Prefix, reserved []Reserved) error {
	for _, list := range [][]Reserved{special, reserved} {
		for _, r := range list {
			if !r.Prefix.IsValid() {
				continue
			}
			for _, c := range cidrs {
				if c.Overlaps(r.Prefix) {
					return &Conflict{CIDR: c, With: r}
				}
			}
		}
	}
	return nil
}

// Prefixes names each of ps as what.
func Prefixes(what string, ps ...netip.Prefix) []Reserved {
	out := make([]Reserved, 0, len(ps))
	for _, p := range ps {
		out = append(out, Reserved{What: what, Prefix: p.Masked()})
	}
	return out
}

// Addrs names each of as, as a single-address prefix, as what.
func Addrs(what string, as ...netip.Addr) []Reserved {
	out := make([]Reserved, 0, len(as))
	for _, a := range as {
		if a.IsValid() {
			a = a.Unmap()
			out = append(out, Reserved{What: what, Prefix: netip.PrefixFrom(a, a.BitLen())})
		}
	}
	return out
}
