package ipam

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// Allocate gives r.Owner one address per family of r.Subnet and a MAC, honouring r.IPs and
// r.MAC. It is idempotent: asking again returns the owner's allocation unchanged. If the owner
// already holds an allocation that differs from the request (another subnet, other static
// addresses or MAC, or a family added to the subnet since), it is replaced in one durable
// step; addresses it keeps stay its own. The allocation is durable when Allocate returns.
func (m *IPAM) Allocate(ctx context.Context, r Request) (Allocation, error) {
	if err := r.validate(); err != nil {
		return Allocation{}, fmt.Errorf("allocate for %s: %w", r.Owner, err)
	}
	m.mu.Lock()
	if m.broken != nil {
		m.mu.Unlock()
		return Allocation{}, m.broken
	}
	sn := m.subnets[r.Subnet]
	if sn == nil {
		m.mu.Unlock()
		return Allocation{}, fmt.Errorf("allocate for %s in subnet %s: %w", r.Owner, r.Subnet, ErrUnknownSubnet)
	}
	cur := m.owners.get(r.Owner)
	want, err := m.plan(sn, r, cur)
	if err != nil {
		m.mu.Unlock()
		return Allocation{}, fmt.Errorf("allocate for %s in subnet %s: %w", r.Owner, r.Subnet, err)
	}
	if cur != nil && cur.Subnet == want.Subnet && slices.Equal(cur.IPs, want.IPs) && bytes.Equal(cur.MAC, want.MAC) {
		a, t := cur.clone(), m.tail()
		m.mu.Unlock()
		return a, m.wait(ctx, t)
	}
	want.Allocated = time.Now().UTC().Round(0)
	t := m.enqueue(m.apply(cur, want))
	m.mu.Unlock()
	if err := m.wait(ctx, t); err != nil {
		return Allocation{}, fmt.Errorf("allocate for %s in subnet %s: %w", r.Owner, r.Subnet, err)
	}
	return want.clone(), nil
}

func (r Request) validate() error {
	if err := r.Owner.validate(); err != nil {
		return err
	}
	for i, ip := range r.IPs {
		if !ip.IsValid() || ip.Zone() != "" || ip.Is4In6() {
			return fmt.Errorf("requested address %q: %w", ip, ErrInvalid)
		}
		if slices.ContainsFunc(r.IPs[:i], func(o netip.Addr) bool { return o.BitLen() == ip.BitLen() }) {
			return fmt.Errorf("requested addresses %v: at most one per family: %w", r.IPs, ErrInvalid)
		}
	}
	if r.MAC != nil {
		return validMAC(r.MAC)
	}
	return nil
}

// plan computes the allocation r asks for without changing anything, so a request that fails
// on its second family leaves the first untouched.
func (m *IPAM) plan(sn *subnet, r Request, cur *Allocation) (Allocation, error) {
	want := Allocation{Subnet: r.Subnet, Owner: r.Owner}
	for _, ip := range r.IPs {
		if err := m.checkInside(sn, ip); err != nil {
			return Allocation{}, err
		}
	}
	for _, pl := range sn.pools {
		ip, err := sn.pick(pl, r, cur)
		if err != nil {
			return Allocation{}, err
		}
		want.IPs = append(want.IPs, ip)
	}
	mac, err := m.pickMAC(r, cur, want.IPs)
	if err != nil {
		return Allocation{}, err
	}
	want.MAC = mac
	return want, nil
}

// pick chooses the address of one family: the requested one, the one the owner holds, or the
// pool's next.
func (sn *subnet) pick(pl *pool, r Request, cur *Allocation) (netip.Addr, error) {
	bits := pl.prefix.Addr().BitLen()
	if i := slices.IndexFunc(r.IPs, func(a netip.Addr) bool { return a.BitLen() == bits }); i >= 0 {
		ip := r.IPs[i]
		if err := sn.checkStatic(pl, ip, r.Owner); err != nil {
			return netip.Addr{}, err
		}
		return ip, nil
	}
	if cur != nil && cur.Subnet == r.Subnet {
		if i := slices.IndexFunc(cur.IPs, func(a netip.Addr) bool { return a.BitLen() == bits }); i >= 0 {
			return cur.IPs[i], nil
		}
	}
	ip, ok := pl.next()
	if !ok {
		return netip.Addr{}, fmt.Errorf("%s: %w", pl.prefix, ErrExhausted)
	}
	return ip, nil
}

func (sn *subnet) checkStatic(pl *pool, ip netip.Addr, o Owner) error {
	if h, held := sn.holders[ip]; held && h == o {
		return nil // a live allocation keeps its address, even one excluded since
	}
	if err := sn.checkHost(pl, ip); err != nil {
		return err
	}
	if h, held := sn.holders[ip]; held {
		return fmt.Errorf("address %s: %w %s", ip, ErrConflict, h)
	}
	return sn.checkNotExcluded(pl, ip)
}

// apply makes want live in memory, replacing cur, and returns the changes that make it
// durable. The caller holds m.mu and has validated want with plan.
func (m *IPAM) apply(cur *Allocation, want Allocation) []Change {
	var changes []Change
	if cur != nil {
		old := cur.clone()
		changes = append(changes, m.release(old))
	}
	sn := m.subnets[want.Subnet]
	for _, ip := range want.IPs {
		sn.pool(ip).take(ip)
	}
	m.hold(sn, want.clone())
	put := want.clone()
	return append(changes, Change{PutAllocation: &put})
}

// release frees a in memory and returns the change that makes it durable. The caller holds m.mu.
func (m *IPAM) release(a Allocation) Change {
	sn := m.subnets[a.Subnet]
	at := m.clock.now()
	m.unhold(sn, a, Released{At: at})
	for _, ip := range a.IPs {
		if pl := sn.pool(ip); pl != nil {
			pl.giveBack(ip)
		}
	}
	return Change{Release: &ReleaseChange{Allocation: a, At: at}}
}
