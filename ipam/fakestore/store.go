package fakestore

import (
	"context"
	"errors"
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
	failNext int
	commits  int
	changes  int
}

// New returns an empty store.
func New() *Store {
	return &Store{subnets: map[string]ipam.Subnet{}, allocs: map[ipam.Owner]ipam.Allocation{},
		released: map[key]ipam.Released{}}
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

// Commit implements ipam.Store with the semantics documented on ipam.Change.
func (s *Store) Commit(_ context.Context, changes []ipam.Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext > 0 {
		s.failNext--
		return ErrInjected
	}
	for _, c := range changes {
		s.apply(c)
	}
	s.commits++
	s.changes += len(changes)
	return nil
}

func (s *Store) apply(c ipam.Change) {
	switch {
	case c.PutSubnet != nil:
		s.subnets[c.PutSubnet.Name] = *c.PutSubnet
	case c.DeleteSubnet != "":
		delete(s.subnets, c.DeleteSubnet)
		for k := range s.released {
			if k.subnet == c.DeleteSubnet {
				delete(s.released, k)
			}
		}
	case c.PutAllocation != nil:
		a := *c.PutAllocation
		s.allocs[a.Owner] = a
		for _, ip := range a.IPs {
			delete(s.released, key{a.Subnet, ip})
		}
	case c.Release != nil:
		a := c.Release.Allocation
		delete(s.allocs, a.Owner)
		for _, ip := range a.IPs {
			s.released[key{a.Subnet, ip}] = ipam.Released{Subnet: a.Subnet, IP: ip, At: c.Release.At}
		}
	case c.PutReleased != nil:
		r := *c.PutReleased
		s.released[key{r.Subnet, r.IP}] = r
	}
}
