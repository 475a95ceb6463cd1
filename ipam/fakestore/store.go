package fakestore

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"

	"github.com/edgeovn/edgeovn/ipam"
)

// ErrInjected is what a commit fails with after FailNext.
var ErrInjected = errors.New("injected store failure")

var _ ipam.Store = (*Store)(nil)

type key struct {
	subnet string
	ip     netip.Addr
}

// Store holds an ipam.State in memory. Safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	subnets  map[string]ipam.Subnet
	allocs   map[ipam.Owner]ipam.Allocation
	released map[key]ipam.Released
	byAddr   map[key]ipam.Owner    // the unique (subnet, address) index
	byMAC    map[string]ipam.Owner // the unique MAC index
	failNext int
	commits  int
	changes  int
}

// New returns an empty store.
func New() *Store {
	return &Store{subnets: map[string]ipam.Subnet{}, allocs: map[ipam.Owner]ipam.Allocation{},
		released: map[key]ipam.Released{}, byAddr: map[key]ipam.Owner{}, byMAC: map[string]ipam.Owner{}}
}

// FailNext makes the next n commits fail with ErrInjected, changing nothing.
func (s *Store) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// Commits returns how many commits succeeded and how many changes they carried.
func (s *Store) Commits() (commits, changes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commits, s.changes
}

// Load implements ipam.Store.
func (s *Store) Load(context.Context) (ipam.State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st ipam.State
	for _, sn := range s.subnets {
		sn.CIDRs = slices.Clone(sn.CIDRs)
		sn.Gateways = slices.Clone(sn.Gateways)
		sn.Excludes = slices.Clone(sn.Excludes)
		st.Subnets = append(st.Subnets, sn)
	}
	for _, a := range s.allocs {
		a.IPs = slices.Clone(a.IPs)
		a.MAC = slices.Clone(a.MAC)
		st.Allocations = append(st.Allocations, a)
	}
	for _, r := range s.released {
		st.Released = append(st.Released, r)
	}
	return st, nil
}

// Commit implements ipam.Store with the semantics documented on ipam.Change, and refuses
// what the SQLite schema refuses: a change that sets no field (ipam.ErrInvalid), an address of
// a subnet or a MAC held by another owner (ipam.ErrConflict). A refused commit changes
// nothing.
func (s *Store) Commit(_ context.Context, changes []ipam.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext > 0 {
		s.failNext--
		return ErrInjected
	}
	var u undo
	for _, c := range changes {
		if err := s.apply(&u, c); err != nil {
			u.rollback()
			return err
		}
	}
	s.commits++
	s.changes += len(changes)
	return nil
}

func (s *Store) apply(u *undo, c ipam.Change) error {
	switch {
	case c.PutSubnet != nil:
		set(u, s.subnets, c.PutSubnet.Name, *c.PutSubnet)
	case c.DeleteSubnet != "":
		del(u, s.subnets, c.DeleteSubnet)
		for k := range s.released {
			if k.subnet == c.DeleteSubnet {
				del(u, s.released, k)
			}
		}
	case c.PutAllocation != nil:
		return s.putAllocation(u, *c.PutAllocation)
	case c.Release != nil:
		a := c.Release.Allocation
		s.dropAllocation(u, a.Owner)
		for _, ip := range a.IPs {
			set(u, s.released, key{a.Subnet, ip}, ipam.Released{Subnet: a.Subnet, IP: ip, At: c.Release.At})
		}
	case c.PutReleased != nil:
		r := *c.PutReleased
		set(u, s.released, key{r.Subnet, r.IP}, r)
	default:
		return fmt.Errorf("ipam change sets no field: %w", ipam.ErrInvalid)
	}
	return nil
}

// putAllocation replaces the owner's allocation, as SQLite does: the old row goes first, so
// an owner never conflicts with itself.
func (s *Store) putAllocation(u *undo, a ipam.Allocation) error {
	s.dropAllocation(u, a.Owner)
	for _, ip := range a.IPs {
		if o, ok := s.byAddr[key{a.Subnet, ip}]; ok {
			return fmt.Errorf("store allocation of %s: address %s of subnet %s (owner %s): %w", a.Owner, ip, a.Subnet, o, ipam.ErrConflict)
		}
	}
	if o, ok := s.byMAC[a.MAC.String()]; ok {
		return fmt.Errorf("store allocation of %s: MAC %s (owner %s): %w", a.Owner, a.MAC, o, ipam.ErrConflict)
	}
	set(u, s.allocs, a.Owner, a)
	for _, ip := range a.IPs {
		set(u, s.byAddr, key{a.Subnet, ip}, a.Owner)
		del(u, s.released, key{a.Subnet, ip})
	}
	set(u, s.byMAC, a.MAC.String(), a.Owner)
	return nil
}

// dropAllocation removes the owner's allocation, if any, and its index entries.
func (s *Store) dropAllocation(u *undo, o ipam.Owner) {
	old, ok := s.allocs[o]
	if !ok {
		return
	}
	del(u, s.allocs, o)
	for _, ip := range old.IPs {
		del(u, s.byAddr, key{old.Subnet, ip})
	}
	del(u, s.byMAC, old.MAC.String())
}
