package ipam

import (
	"context"
	"fmt"
	"slices"
)

// Release frees the owner's allocation. Releasing what is not held succeeds. The release is
// durable when Release returns.
func (m *IPAM) Release(ctx context.Context, o Owner) error {
	return m.releaseOwners(ctx, "release "+o.String(), func() []Owner { return []Owner{o} })
}

// ReleasePod frees the allocations of every interface of pod ("namespace/name").
func (m *IPAM) ReleasePod(ctx context.Context, pod string) error {
	return m.releaseOwners(ctx, "release pod "+pod, func() []Owner {
		var owners []Owner
		for _, a := range m.owners.pod(pod) {
			owners = append(owners, a.Owner)
		}
		slices.SortFunc(owners, compareOwners)
		return owners
	})
}

// releaseOwners frees the allocations of the owners that list returns (called under m.mu).
func (m *IPAM) releaseOwners(ctx context.Context, what string, list func() []Owner) error {
	m.mu.Lock()
	if m.broken != nil {
		m.mu.Unlock()
		return m.broken
	}
	var changes []Change
	for _, o := range list() {
		if a := m.owners.get(o); a != nil {
			changes = append(changes, m.release(a.clone()))
		}
	}
	t := m.tail()
	if len(changes) > 0 {
		t = m.enqueue(changes)
	}
	m.mu.Unlock()
	if err := m.wait(ctx, t); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
