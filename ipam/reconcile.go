package ipam

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// Conflict is a claim Reconcile could not honour: its address or MAC is held by an older
// claim (Holder), or the claim itself is invalid for the subnet (Err says which).
type Conflict struct {
	Claim  Allocation
	Holder Owner // zero unless another owner holds what the claim asks for
	Err    error
}

// ReconcileResult says what Reconcile changed, for logs and Events. Lists are sorted.
type ReconcileResult struct {
	Adopted   []Owner    // claims the database lacked (or held differently), now recorded
	Released  []Owner    // allocations no claim backs, now released
	Conflicts []Conflict // claims refused, in claim order
}

// Reconcile makes the IPAM hold exactly the claims (what the cluster says each owner has:
// Subnet, Owner, IPs, optionally MAC; Allocated is when the claim was made). Allocations no
// claim backs, or that differ from their claim, are released; claims are then adopted oldest
// first (ties by owner), so when two claim one address the oldest wins (also over a newer claim
// the database already held) and the others are reported. Everything is written in one durable commit.
func (m *IPAM) Reconcile(ctx context.Context, claims []Allocation) (ReconcileResult, error) {
	claims = slices.Clone(claims)
	for i := range claims {
		claims[i].IPs = slices.Clone(claims[i].IPs)
		slices.SortStableFunc(claims[i].IPs, func(a, b netip.Addr) int { return cmp.Compare(a.BitLen(), b.BitLen()) })
	}
	slices.SortStableFunc(claims, func(a, b Allocation) int {
		return cmp.Or(a.Allocated.Compare(b.Allocated), compareOwners(a.Owner, b.Owner))
	})
	m.mu.Lock()
	if m.broken != nil {
		m.mu.Unlock()
		return ReconcileResult{}, m.broken
	}
	var res ReconcileResult
	changes := m.releaseUnclaimed(claims, &res)
	rank := claimRanks(claims)
	lostTo := map[Owner]bool{}
	for i, c := range claims {
		if m.owners.get(c.Owner) != nil || lostTo[c.Owner] {
			continue // matches its claim, or an older claim (its own or another's) won
		}
		ch, lost, conflict := m.adoptOverNewer(c, i, rank, claims)
		changes = append(changes, ch...)
		for _, l := range lost {
			lostTo[l.Claim.Owner] = true
		}
		res.Conflicts = append(res.Conflicts, lost...)
		if conflict != nil {
			res.Conflicts = append(res.Conflicts, *conflict)
			continue
		}
		res.Adopted = append(res.Adopted, c.Owner)
	}
	slices.SortStableFunc(res.Conflicts, func(a, b Conflict) int { return cmp.Compare(rank[a.Claim.Owner], rank[b.Claim.Owner]) })
	t := m.tail()
	if len(changes) > 0 {
		t = m.enqueue(changes)
	}
	m.mu.Unlock()
	slices.SortFunc(res.Adopted, compareOwners)
	slices.SortFunc(res.Released, compareOwners)
	if err := m.wait(ctx, t); err != nil {
		return ReconcileResult{}, fmt.Errorf("reconcile %d claims: %w", len(claims), err)
	}
	return res, nil
}

// releaseUnclaimed releases every allocation that no claim matches exactly. The caller holds m.mu.
func (m *IPAM) releaseUnclaimed(claims []Allocation, res *ReconcileResult) []Change {
	byOwner := make(map[Owner]Allocation, len(claims))
	for _, c := range claims {
		if _, dup := byOwner[c.Owner]; !dup {
			byOwner[c.Owner] = c
		}
	}
	var stale []Allocation
	m.owners.each(func(a *Allocation) {
		c, claimed := byOwner[a.Owner]
		if !claimed || c.Subnet != a.Subnet || !slices.Equal(c.IPs, a.IPs) || (c.MAC != nil && !bytes.Equal(c.MAC, a.MAC)) {
			stale = append(stale, *a)
			if !claimed {
				res.Released = append(res.Released, a.Owner)
			}
		}
	})
	slices.SortFunc(stale, func(a, b Allocation) int { return compareOwners(a.Owner, b.Owner) })
	changes := make([]Change, 0, len(stale))
	for _, a := range stale {
		changes = append(changes, m.release(a.clone()))
	}
	return changes
}

// adoptClaim records one claim, or says why it cannot. The caller holds m.mu.
func (m *IPAM) adoptClaim(c Allocation) ([]Change, *Conflict) {
	r := Request{Subnet: c.Subnet, Owner: c.Owner, IPs: c.IPs, MAC: c.MAC}
	refuse := func(err error) *Conflict {
		conflict := &Conflict{Claim: c.clone(), Err: err}
		if errors.Is(err, ErrConflict) {
			conflict.Holder = m.holderOf(c)
		}
		return conflict
	}
	if err := r.validate(); err != nil {
		return nil, refuse(err)
	}
	sn := m.subnets[c.Subnet]
	if sn == nil {
		return nil, refuse(fmt.Errorf("subnet %s: %w", c.Subnet, ErrUnknownSubnet))
	}
	want, err := m.plan(sn, r, nil)
	if err != nil {
		return nil, refuse(err)
	}
	want.Allocated = c.Allocated
	return m.apply(nil, want), nil
}

// claimRanks maps each owner to the position of its first claim in the sorted claims: the
// lower, the older.
func claimRanks(claims []Allocation) map[Owner]int {
	rank := make(map[Owner]int, len(claims))
	for i, c := range claims {
		if _, dup := rank[c.Owner]; !dup {
			rank[c.Owner] = i
		}
	}
	return rank
}

// adoptOverNewer adopts claims[i] (c); where what it asks for is held by a newer claim (one
// the database already held, so never adopted in order), that holder is released and
// reported as lost to c, so the oldest claim wins whatever the database held before. It
// returns the changes made, the newer claims that lost, and c's own conflict if it still
// cannot be adopted. The caller holds m.mu.
func (m *IPAM) adoptOverNewer(c Allocation, i int, rank map[Owner]int, claims []Allocation) ([]Change, []Conflict, *Conflict) {
	var changes []Change
	var lost []Conflict
	for {
		ch, conflict := m.adoptClaim(c)
		if conflict == nil {
			return append(changes, ch...), lost, nil
		}
		r, claimed := rank[conflict.Holder]
		held := m.owners.get(conflict.Holder)
		if !claimed || r <= i || held == nil {
			return changes, lost, conflict
		}
		changes = append(changes, m.release(held.clone()))
		lost = append(lost, Conflict{Claim: claims[r].clone(), Holder: c.Owner,
			Err: fmt.Errorf("%w %s, whose claim is older", ErrConflict, c.Owner)})
	}
}

// holderOf returns who holds one of c's addresses or its MAC.
func (m *IPAM) holderOf(c Allocation) Owner {
	if sn := m.subnets[c.Subnet]; sn != nil {
		for _, ip := range c.IPs {
			if o, ok := sn.holders[ip]; ok {
				return o
			}
		}
	}
	return m.macs[keyOf(c.MAC)]
}
