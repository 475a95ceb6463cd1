package metrics

import (
	"context"

	"github.com/edgeovn/edgeovn/ipam"
)

// countingStore counts the allocations and releases of each commit that succeeded: what is
// durable, not what was asked for (an Allocate that changes nothing commits nothing).
type countingStore struct {
	ipam.Store
	m *Metrics
}

// CountIPAM wraps the IPAM's store so that its durable allocations and releases are counted;
// a nil Metrics returns store itself.
func (m *Metrics) CountIPAM(store ipam.Store) ipam.Store {
	if m == nil {
		return store
	}
	return countingStore{Store: store, m: m}
}

func (s countingStore) Commit(ctx context.Context, changes []ipam.Change) error {
	if err := s.Store.Commit(ctx, changes); err != nil {
		return err
	}
	for _, c := range changes {
		switch {
		case c.PutAllocation != nil:
			s.m.allocs.WithLabelValues(c.PutAllocation.Subnet).Inc()
		case c.Release != nil:
			s.m.releases.WithLabelValues(c.Release.Allocation.Subnet).Inc()
		}
	}
	return nil
}
