package ipam

import (
	"maps"
	"math/big"
	"net/netip"
	"slices"
)

// Usage is how full one CIDR of a subnet is.
type Usage struct {
	Subnet string
	CIDR   netip.Prefix
	// Used counts the addresses held in the CIDR.
	Used int
	// Capacity counts the addresses the CIDR can hand out: its usable range less the gateway
	// and the excluded ranges. A float64, as an IPv6 CIDR's can exceed any integer type.
	Capacity float64
}

// Usage returns the usage of every CIDR of every subnet, by subnet name, then CIDR order.
func (m *IPAM) Usage() []Usage {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Usage
	for _, name := range slices.Sorted(maps.Keys(m.subnets)) {
		sn := m.subnets[name]
		reserved := sn.spec.reserved()
		for _, p := range sn.spec.CIDRs {
			u := Usage{Subnet: sn.spec.Name, CIDR: p}
			for a := range sn.holders {
				if p.Contains(a) {
					u.Used++
				}
			}
			usable := usableRange(p)
			u.Capacity = rangeSize(usable)
			for _, r := range reserved {
				if in, ok := intersect(r, usable); ok {
					u.Capacity -= rangeSize(in)
				}
			}
			out = append(out, u)
		}
	}
	return out
}

func intersect(a, b Range) (Range, bool) {
	first, last := a.First, a.Last
	if b.First.Compare(first) > 0 {
		first = b.First
	}
	if b.Last.Compare(last) < 0 {
		last = b.Last
	}
	return Range{First: first, Last: last}, first.BitLen() == last.BitLen() && first.Compare(last) <= 0
}

// rangeSize is the number of addresses in r.
func rangeSize(r Range) float64 {
	f, l := r.First.As16(), r.Last.As16()
	n := new(big.Int).Sub(new(big.Int).SetBytes(l[:]), new(big.Int).SetBytes(f[:]))
	v, _ := new(big.Float).SetInt(n.Add(n, big.NewInt(1))).Float64()
	return v
}
