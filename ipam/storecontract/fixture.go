package storecontract

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
)

// fixture is one case's store and the helpers that write to it and read it back.
type fixture struct {
	t   *testing.T
	ctx context.Context
	st  ipam.Store
}

// commit commits changes and fails the test on an error.
func (f *fixture) commit(changes ...ipam.Change) {
	f.t.Helper()
	if err := f.st.Commit(f.ctx, changes); err != nil {
		f.t.Fatalf("commit %d changes: %v", len(changes), err)
	}
}

// refused commits changes, wants an error wrapping want, and wants the store unchanged.
func (f *fixture) refused(want error, changes ...ipam.Change) {
	f.t.Helper()
	before := f.dump()
	err := f.st.Commit(f.ctx, changes)
	if !errors.Is(err, want) {
		f.t.Fatalf("commit: got error %v, want one wrapping %q", err, want)
	}
	if after := f.dump(); after != before {
		f.t.Fatalf("a refused commit changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func (f *fixture) load() ipam.State {
	f.t.Helper()
	s, err := f.st.Load(f.ctx)
	if err != nil {
		f.t.Fatalf("load: %v", err)
	}
	return s
}

// want compares the loaded state with the lines of dump, in any order.
func (f *fixture) want(lines ...string) {
	f.t.Helper()
	slices.Sort(lines)
	if got, want := f.dump(), strings.Join(lines, "\n"); got != want {
		f.t.Fatalf("loaded state:\n%s\nwant:\n%s", got, want)
	}
}

// dump renders the loaded state as sorted lines, one per subnet, allocation and released
// address, so two states compare as strings whatever order Load returned them in.
func (f *fixture) dump() string {
	f.t.Helper()
	s := f.load()
	var lines []string
	for _, sn := range s.Subnets {
		lines = append(lines, subnetLine(sn))
	}
	for _, a := range s.Allocations {
		lines = append(lines, allocLine(a))
	}
	for _, r := range s.Released {
		lines = append(lines, releasedLine(r))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func subnetLine(sn ipam.Subnet) string {
	return fmt.Sprintf("subnet %s cidrs=%v gw=%v excl=%v", sn.Name, sn.CIDRs, sn.Gateways, sn.Excludes)
}

func allocLine(a ipam.Allocation) string {
	return fmt.Sprintf("alloc %s %s %v %s at=%d", a.Subnet, a.Owner, a.IPs, a.MAC, a.Allocated.UnixNano())
}

func releasedLine(r ipam.Released) string {
	return fmt.Sprintf("released %s %s at=%d", r.Subnet, r.IP, r.At.UnixNano())
}

var (
	t0 = time.Unix(1_700_000_000, 123456789)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(time.Hour)
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func owner(name string) ipam.Owner { return ipam.Owner{Pod: "default/" + name, Interface: "eth0"} }

// alloc is an allocation on subnet of owner name, with the MAC 0a:00:00:00:00:<mac>.
func alloc(subnet, name string, mac byte, ips ...string) ipam.Allocation {
	a := ipam.Allocation{Subnet: subnet, Owner: owner(name), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, mac}, Allocated: t0}
	for _, s := range ips {
		a.IPs = append(a.IPs, addr(s))
	}
	return a
}

func subnet(name string, cidrs ...string) ipam.Subnet {
	sn := ipam.Subnet{Name: name}
	for _, c := range cidrs {
		sn.CIDRs = append(sn.CIDRs, netip.MustParsePrefix(c))
	}
	return sn
}

func put(a ipam.Allocation) ipam.Change { return ipam.Change{PutAllocation: &a} }

func putSubnet(sn ipam.Subnet) ipam.Change { return ipam.Change{PutSubnet: &sn} }

func release(a ipam.Allocation, at time.Time) ipam.Change {
	return ipam.Change{Release: &ipam.ReleaseChange{Allocation: a, At: at}}
}

func putReleased(sn, ip string, at time.Time) ipam.Change {
	return ipam.Change{PutReleased: &ipam.Released{Subnet: sn, IP: addr(ip), At: at}}
}
