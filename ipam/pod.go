package ipam

import "slices"

// PodAllocations returns the allocations of every interface of pod ("namespace/name"),
// sorted by owner: a pod's primary interface and its attachments.
func (m *IPAM) PodAllocations(pod string) []Allocation {
	m.mu.RLock()
	var out []Allocation
	for _, a := range m.owners.pod(pod) {
		out = append(out, a.clone())
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Allocation) int { return compareOwners(a.Owner, b.Owner) })
	return out
}
