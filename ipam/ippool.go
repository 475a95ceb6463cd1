package ipam

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// IPPool is a named set of addresses inside a subnet (Kube-OVN's IPPool). A Request naming
// the pool gets its addresses only from the pool's ranges; a request naming no pool never
// gets a dynamic address that lies in any pool. A pool that has no range of one family of a
// dual-stack subnet takes that family's address from outside every pool.
type IPPool struct {
	Name   string  `json:"name"`
	Ranges []Range `json:"ranges"` // merged, sorted, inside the subnet's CIDRs
}

// ParsePoolIPs parses the IPs of a Kube-OVN IPPool: single addresses ("10.0.0.5"), ranges
// ("10.0.0.10..10.0.0.20") and CIDRs ("10.0.1.0/28").
func ParsePoolIPs(ips []string) ([]Range, error) {
	out := make([]Range, 0, len(ips))
	for _, s := range ips {
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(strings.TrimSpace(s))
			if err != nil || p.Addr().Zone() != "" || p.Addr().Is4In6() {
				return nil, fmt.Errorf("parse pool cidr %q: %w", s, ErrInvalid)
			}
			out = append(out, Range{First: p.Masked().Addr(), Last: lastAddr(p)})
			continue
		}
		r, err := ParseRange(s)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (p IPPool) clone() IPPool {
	p.Ranges = slices.Clone(p.Ranges)
	return p
}

// normalizePools validates the pools of s (names set and unique, ranges valid, inside the
// CIDRs, no address in two pools) and returns them sorted by name with merged ranges.
func (s Subnet) normalizePools() ([]IPPool, error) {
	if len(s.Pools) == 0 {
		return nil, nil
	}
	pools := make([]IPPool, len(s.Pools))
	owner := map[netip.Addr]string{} // first address of each merged range, for the overlap check
	var all []Range
	for i, p := range s.Pools {
		if p.Name == "" {
			return nil, fmt.Errorf("subnet %s: pool without a name: %w", s.Name, ErrInvalid)
		}
		if slices.ContainsFunc(s.Pools[:i], func(o IPPool) bool { return o.Name == p.Name }) {
			return nil, fmt.Errorf("subnet %s: pool %s defined twice: %w", s.Name, p.Name, ErrInvalid)
		}
		if len(p.Ranges) == 0 {
			return nil, fmt.Errorf("subnet %s: pool %s has no addresses: %w", s.Name, p.Name, ErrInvalid)
		}
		for _, r := range p.Ranges {
			if err := r.validate(); err != nil {
				return nil, fmt.Errorf("subnet %s: pool %s: %w", s.Name, p.Name, err)
			}
			if !slices.ContainsFunc(s.CIDRs, func(c netip.Prefix) bool { return c.Contains(r.First) && c.Contains(r.Last) }) {
				return nil, fmt.Errorf("subnet %s: pool %s: range %s is outside %v: %w", s.Name, p.Name, r, s.CIDRs, ErrInvalid)
			}
		}
		pools[i] = IPPool{Name: p.Name, Ranges: mergeRanges(p.Ranges)}
		for _, r := range pools[i].Ranges {
			owner[r.First] = p.Name
			all = append(all, r)
		}
	}
	if err := checkDisjoint(s.Name, all, owner); err != nil {
		return nil, err
	}
	slices.SortFunc(pools, func(a, b IPPool) int { return strings.Compare(a.Name, b.Name) })
	return pools, nil
}

// checkDisjoint fails if two of the ranges (each pool's already merged) share an address.
func checkDisjoint(subnet string, all []Range, owner map[netip.Addr]string) error {
	slices.SortFunc(all, func(a, b Range) int { return a.First.Compare(b.First) })
	for i := 1; i < len(all); i++ {
		if all[i].First.Compare(all[i-1].Last) <= 0 {
			return fmt.Errorf("subnet %s: pools %s and %s overlap at %s: %w", subnet,
				owner[all[i-1].First], owner[all[i].First], all[i].First, ErrInvalid)
		}
	}
	return nil
}

// zones returns, for one CIDR, the ranges each pool may hand out ("" is the pool-less zone:
// the usable range minus every pool).
func (s Subnet) zones(p netip.Prefix) map[string][]Range {
	usable := usableRange(p)
	zones := map[string][]Range{}
	var pooled []Range
	for _, pl := range s.Pools {
		var in []Range
		for _, r := range pl.Ranges {
			if r.First.BitLen() != usable.First.BitLen() || r.Last.Compare(usable.First) < 0 || r.First.Compare(usable.Last) > 0 {
				continue
			}
			in = append(in, Range{First: maxAddr(r.First, usable.First), Last: minAddr(r.Last, usable.Last)})
		}
		if len(in) > 0 {
			zones[pl.Name] = in
			pooled = append(pooled, in...)
		}
	}
	zones[""] = complement(usable.First, usable.Last, mergeRanges(pooled))
	return zones
}

func maxAddr(a, b netip.Addr) netip.Addr {
	if a.Compare(b) > 0 {
		return a
	}
	return b
}

func minAddr(a, b netip.Addr) netip.Addr {
	if a.Compare(b) < 0 {
		return a
	}
	return b
}
