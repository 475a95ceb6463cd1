package ipam

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
)

// Get returns the owner's allocation. Like the other queries it reads memory: it may show a
// change whose commit is still in flight (and is undone if that commit fails).
func (m *IPAM) Get(o Owner) (Allocation, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	a := m.owners.get(o)
	if a == nil {
		return Allocation{}, false
	}
	return a.clone(), true
}

// Allocations returns every live allocation, sorted by subnet, pod and interface.
func (m *IPAM) Allocations() []Allocation {
	m.mu.RLock()
	out := make([]Allocation, 0, m.owners.len())
	m.owners.each(func(a *Allocation) { out = append(out, a.clone()) })
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Allocation) int {
		return cmp.Or(strings.Compare(a.Subnet, b.Subnet), compareOwners(a.Owner, b.Owner))
	})
	return out
}

// Owner returns who holds ip in subnet.
func (m *IPAM) Owner(subnet string, ip netip.Addr) (Owner, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	sn := m.subnets[subnet]
	if sn == nil {
		return Owner{}, false
	}
	o, ok := sn.holders[ip]
	return o, ok
}

// Subnets returns the subnets, sorted by name.
func (m *IPAM) Subnets() []Subnet {
	m.mu.RLock()
	out := make([]Subnet, 0, len(m.subnets))
	for _, sn := range m.subnets {
		out = append(out, sn.spec.clone())
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Subnet) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func compareOwners(a, b Owner) int {
	return cmp.Or(strings.Compare(a.Pod, b.Pod), strings.Compare(a.Interface, b.Interface))
}
