package ipam

import (
	"cmp"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// normalize validates s and returns it in canonical form: CIDRs masked and IPv4 first,
// gateways in CIDR order, excludes merged.
func (s Subnet) normalize() (Subnet, error) {
	s = s.clone()
	if s.Name == "" {
		return Subnet{}, fmt.Errorf("subnet without a name: %w", ErrInvalid)
	}
	if len(s.CIDRs) == 0 || len(s.CIDRs) > 2 {
		return Subnet{}, fmt.Errorf("subnet %s: want one CIDR per family, got %d: %w", s.Name, len(s.CIDRs), ErrInvalid)
	}
	for i, p := range s.CIDRs {
		if !p.IsValid() || p.Addr().Zone() != "" || p.Addr().Is4In6() {
			return Subnet{}, fmt.Errorf("subnet %s: invalid CIDR %s: %w", s.Name, p, ErrInvalid)
		}
		s.CIDRs[i] = p.Masked()
	}
	slices.SortFunc(s.CIDRs, func(a, b netip.Prefix) int { return cmp.Compare(a.Addr().BitLen(), b.Addr().BitLen()) })
	if len(s.CIDRs) == 2 && s.CIDRs[0].Addr().BitLen() == s.CIDRs[1].Addr().BitLen() {
		return Subnet{}, fmt.Errorf("subnet %s: CIDRs %s and %s are of one family: %w", s.Name, s.CIDRs[0], s.CIDRs[1], ErrInvalid)
	}
	gws, err := s.normalizeGateways()
	if err != nil {
		return Subnet{}, err
	}
	s.Gateways = gws
	for _, r := range s.Excludes {
		if err := r.validate(); err != nil {
			return Subnet{}, fmt.Errorf("subnet %s: exclude: %w", s.Name, err)
		}
		if !slices.ContainsFunc(s.CIDRs, func(p netip.Prefix) bool { return p.Contains(r.First) && p.Contains(r.Last) }) {
			return Subnet{}, fmt.Errorf("subnet %s: exclude %s is outside %v: %w", s.Name, r, s.CIDRs, ErrInvalid)
		}
	}
	if len(s.Excludes) > 0 {
		s.Excludes = mergeRanges(s.Excludes)
	}
	return s, nil
}

func (s Subnet) normalizeGateways() ([]netip.Addr, error) {
	var out []netip.Addr
	for _, p := range s.CIDRs {
		var found []netip.Addr
		for _, g := range s.Gateways {
			if g.BitLen() == p.Addr().BitLen() {
				found = append(found, g)
			}
		}
		if len(found) > 1 {
			return nil, fmt.Errorf("subnet %s: gateways %v: at most one per family: %w", s.Name, found, ErrInvalid)
		}
		if len(found) == 1 {
			if !usableRange(p).Contains(found[0]) {
				return nil, fmt.Errorf("subnet %s: gateway %s is not a host address of %s: %w", s.Name, found[0], p, ErrInvalid)
			}
			out = append(out, found[0])
		}
	}
	if len(out) != len(s.Gateways) {
		return nil, fmt.Errorf("subnet %s: gateways %v do not match the families of %v: %w", s.Name, s.Gateways, s.CIDRs, ErrInvalid)
	}
	return out, nil
}

// reserved returns the gateways and excludes as one merged range list.
func (s Subnet) reserved() []Range {
	rs := slices.Clone(s.Excludes)
	for _, g := range s.Gateways {
		rs = append(rs, Range{First: g, Last: g})
	}
	return mergeRanges(rs)
}

func (s Subnet) equal(o Subnet) bool {
	return s.Name == o.Name && slices.Equal(s.CIDRs, o.CIDRs) && slices.Equal(s.Gateways, o.Gateways) &&
		slices.Equal(s.Excludes, o.Excludes)
}

// EnsureSubnet creates the subnet or updates it to s. A CIDR may grow, excludes may change,
// and a family may be added; a change that would leave a live allocation outside the CIDRs or
// put the gateway on a held address fails with ErrConflict and changes nothing. Live
// allocations that fall into a new exclude keep their addresses; they are logged.
func (m *IPAM) EnsureSubnet(ctx context.Context, s Subnet) error {
	s, err := s.normalize()
	if err != nil {
		return fmt.Errorf("ensure subnet: %w", err)
	}
	m.mu.Lock()
	if m.broken != nil {
		m.mu.Unlock()
		return m.broken
	}
	sn := m.subnets[s.Name]
	if sn != nil && sn.spec.equal(s) {
		t := m.tail()
		m.mu.Unlock()
		return m.wait(ctx, t)
	}
	if sn != nil {
		if err := sn.checkUpdate(s); err != nil {
			m.mu.Unlock()
			return fmt.Errorf("update subnet %s: %w", s.Name, err)
		}
		m.warnExcluded(sn, s)
	} else {
		sn = &subnet{holders: map[netip.Addr]Owner{}, released: map[netip.Addr]Released{}}
		m.subnets[s.Name] = sn
	}
	sn.spec = s
	sn.rebuildPools()
	spec := s.clone()
	t := m.enqueue([]Change{{PutSubnet: &spec}})
	m.mu.Unlock()
	return m.wait(ctx, t)
}

// checkUpdate refuses a new spec that strands a live allocation.
func (sn *subnet) checkUpdate(s Subnet) error {
	var outside []string
	for ip, o := range sn.holders {
		if !slices.ContainsFunc(s.CIDRs, func(p netip.Prefix) bool { return usableRange(p).Contains(ip) }) {
			outside = append(outside, fmt.Sprintf("%s (%s)", ip, o))
		}
		if slices.Contains(s.Gateways, ip) {
			return fmt.Errorf("gateway %s is held by %s: %w", ip, o, ErrConflict)
		}
	}
	if len(outside) > 0 {
		return fmt.Errorf("live allocations outside %v: %s: %w", s.CIDRs, listSome(outside), ErrConflict)
	}
	return nil
}

func (m *IPAM) warnExcluded(sn *subnet, s Subnet) {
	for ip, o := range sn.holders {
		if slices.ContainsFunc(s.Excludes, func(r Range) bool { return r.Contains(ip) }) {
			m.log.Warn("excluded address stays with its owner until released", "subnet", s.Name,
				"ip", ip.String(), "pod", o.Pod, "interface", o.Interface)
		}
	}
}

// DeleteSubnet removes a subnet that has no live allocations; otherwise it fails with
// ErrInUse naming them. Deleting an unknown subnet succeeds.
func (m *IPAM) DeleteSubnet(ctx context.Context, name string) error {
	m.mu.Lock()
	if m.broken != nil {
		m.mu.Unlock()
		return m.broken
	}
	sn := m.subnets[name]
	if sn == nil {
		t := m.tail()
		m.mu.Unlock()
		return m.wait(ctx, t)
	}
	if len(sn.holders) > 0 {
		var held []string
		for ip, o := range sn.holders {
			held = append(held, fmt.Sprintf("%s (%s)", ip, o))
		}
		m.mu.Unlock()
		return fmt.Errorf("delete subnet %s: live allocations %s: %w", name, listSome(held), ErrInUse)
	}
	delete(m.subnets, name)
	t := m.enqueue([]Change{{DeleteSubnet: name}})
	m.mu.Unlock()
	return m.wait(ctx, t)
}

// listSome names up to five items, sorted, so errors stay readable and deterministic.
func listSome(items []string) string {
	slices.Sort(items)
	if len(items) > 5 {
		return strings.Join(items[:5], ", ") + fmt.Sprintf(" and %d more", len(items)-5)
	}
	return strings.Join(items, ", ")
}
