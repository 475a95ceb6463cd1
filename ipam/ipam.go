package ipam

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
)

// IPAM allocates addresses and MACs. See doc.go for its invariants and locking.
type IPAM struct {
	store Store
	log   *slog.Logger

	// mu guards everything below. It is never held while the store writes.
	mu         sync.RWMutex
	committing bool          // a caller is writing a batch to the store (group commit)
	turn       chan struct{} // closed when that commit ends
	broken     error         // set when the store could not be reloaded after a failed commit
	queue      []*ticket     // changes applied in memory, not yet durable, in order
	clock      releaseClock
	subnets    map[string]*subnet
	owners     ownerIndex
	macs       map[macKey]Owner
}

// subnet is one subnet's live state.
type subnet struct {
	spec     Subnet
	pools    []*pool // one per CIDR, same order
	holders  map[netip.Addr]Owner
	released map[netip.Addr]Released
}

// New loads the IPAM's state from store.
func New(ctx context.Context, store Store, log *slog.Logger) (*IPAM, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &IPAM{store: store, log: log}
	st, err := store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("load ipam state: %w", err)
	}
	m.reset(st)
	return m, nil
}

// reset replaces the in-memory state with st, which it takes ownership of. Inconsistent records (which a store with the
// right constraints never returns) are logged and skipped rather than trusted, so the
// invariant "one holder per address and per MAC" holds in memory whatever the store holds.
func (m *IPAM) reset(st State) {
	n := len(st.Allocations)
	m.subnets = map[string]*subnet{}
	m.owners = newOwnerIndex(n)
	m.macs = make(map[macKey]Owner, n)
	perSubnet := map[string]int{}
	for _, a := range st.Allocations {
		perSubnet[a.Subnet] += len(a.IPs)
	}
	for _, s := range st.Subnets {
		m.subnets[s.Name] = &subnet{spec: s.clone(), holders: make(map[netip.Addr]Owner, perSubnet[s.Name]),
			released: map[netip.Addr]Released{}}
	}
	if !m.indexBulk(st.Allocations) {
		m.clearIndexes()
		for i := range st.Allocations {
			a := &st.Allocations[i]
			if err := m.adoptLoaded(a); err != nil {
				m.log.Error("skip inconsistent stored allocation", "pod", a.Owner.Pod, "ip", fmt.Sprint(a.IPs), "err", err)
			}
		}
	}
	for _, r := range st.Released {
		if r.At.After(m.clock.last) {
			m.clock.last = r.At
		}
		sn := m.subnets[r.Subnet]
		if sn == nil {
			continue
		}
		if _, held := sn.holders[r.IP]; !held {
			sn.released[r.IP] = r
		}
	}
	for _, sn := range m.subnets {
		sn.rebuildPools()
	}
}

// adoptLoaded indexes a loaded allocation after checking it against those indexed before,
// keeping a pointer into the loaded state rather than a copy.
func (m *IPAM) adoptLoaded(a *Allocation) error {
	sn := m.subnets[a.Subnet]
	if sn == nil {
		return fmt.Errorf("subnet %s: %w", a.Subnet, ErrUnknownSubnet)
	}
	if m.owners.get(a.Owner) != nil {
		return fmt.Errorf("owner %s stored twice: %w", a.Owner, ErrConflict)
	}
	if err := validMAC(a.MAC); err != nil {
		return err
	}
	if h, dup := m.macs[keyOf(a.MAC)]; dup {
		return fmt.Errorf("mac %s also held by %s: %w", a.MAC, h, ErrConflict)
	}
	for _, ip := range a.IPs {
		if h, dup := sn.holders[ip]; dup {
			return fmt.Errorf("address %s also held by %s: %w", ip, h, ErrConflict)
		}
	}
	m.index(sn, a)
	return nil
}

// hold records a as live in the indexes (not in the pools).
func (m *IPAM) hold(sn *subnet, a Allocation) {
	m.index(sn, &a)
}

// index records a in the owner, MAC and address indexes; a is the IPAM's own.
func (m *IPAM) index(sn *subnet, a *Allocation) {
	m.owners.put(a)
	m.macs[keyOf(a.MAC)] = a.Owner
	for _, ip := range a.IPs {
		sn.holders[ip] = a.Owner
		delete(sn.released, ip)
	}
}

// unhold removes a from the indexes and records its addresses as released at the given time.
func (m *IPAM) unhold(sn *subnet, a Allocation, r Released) {
	m.owners.remove(a.Owner)
	delete(m.macs, keyOf(a.MAC))
	for _, ip := range a.IPs {
		delete(sn.holders, ip)
		sn.released[ip] = Released{Subnet: sn.spec.Name, IP: ip, At: r.At}
	}
}

// rebuildPools recomputes the pools from the spec, the holders and the released records.
func (sn *subnet) rebuildPools() {
	released := make([]Released, 0, len(sn.released))
	for _, r := range sn.released {
		released = append(released, r)
	}
	sortReleased(released)
	reserved := sn.spec.reserved()
	sn.pools = sn.pools[:0]
	for _, p := range sn.spec.CIDRs {
		ps := poolSpec{prefix: p, reserved: reserved, taken: taken(p, reserved, sn.holders, released), released: released}
		sn.pools = append(sn.pools, buildPool(ps, sn.holders))
	}
}

// pool returns the pool of a's family, or nil.
func (sn *subnet) pool(a netip.Addr) *pool {
	for _, pl := range sn.pools {
		if pl.prefix.Addr().BitLen() == a.BitLen() {
			return pl
		}
	}
	return nil
}
