package ipam

import (
	"context"
	"fmt"
)

// ImportReleased records releases another IPAM made (the previous leader's, which the
// controller keeps in the cluster because each host's database is its own), so their
// addresses queue as released, in release order among this IPAM's own releases, behind every
// never-used address, instead of looking never used here. A record for an address held here,
// of an unknown subnet, outside the subnet's ranges or reserved, or no newer than what this
// IPAM already knows of the address, changes nothing. It returns how many it recorded; they
// are durable when it returns.
func (m *IPAM) ImportReleased(ctx context.Context, recs []Released) (int, error) {
	m.mu.Lock()
	if m.broken != nil {
		m.mu.Unlock()
		return 0, m.broken
	}
	var changes []Change
	touched := map[*subnet]bool{}
	for _, r := range recs {
		sn := m.subnets[r.Subnet]
		if sn == nil || !m.importable(sn, r) {
			continue
		}
		r.At = r.At.UTC().Round(0)
		sn.released[r.IP] = r
		if r.At.After(m.clock.last) {
			m.clock.last = r.At
		}
		touched[sn] = true
		rec := r
		changes = append(changes, Change{PutReleased: &rec})
	}
	for sn := range touched {
		sn.rebuildPools()
	}
	t := m.tail()
	if len(changes) > 0 {
		t = m.enqueue(changes)
	}
	m.mu.Unlock()
	if err := m.wait(ctx, t); err != nil {
		return 0, fmt.Errorf("import %d released addresses: %w", len(changes), err)
	}
	return len(changes), nil
}

// importable says whether r may be recorded in sn. The caller holds m.mu.
func (m *IPAM) importable(sn *subnet, r Released) bool {
	if _, held := sn.holders[r.IP]; held {
		return false
	}
	pl := sn.pool(r.IP)
	if pl == nil || !pl.prefix.Contains(r.IP) || !pl.usable.Contains(r.IP) || pl.isReserved(r.IP) {
		return false
	}
	cur, known := sn.released[r.IP]
	return !known || r.At.After(cur.At)
}
