package ipam_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
)

func TestReconcile(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1"),
		Excludes: []ipam.Range{rng(t, "10.0.0.200..10.0.0.254")}})
	for _, p := range []string{"kept", "stale", "moved"} { // .2 .3 .4
		_, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod(p)})
		must(t, err)
	}
	kept, _ := m.Get(pod("kept"))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	claim := func(p, ip string, age int) ipam.Allocation {
		return ipam.Allocation{Subnet: "s", Owner: pod(p), IPs: addrs(ip), Allocated: t0.Add(time.Duration(age) * time.Minute)}
	}
	claims := []ipam.Allocation{
		claim("newer", "10.0.0.50", 5), // loses 10.0.0.50 to older
		claim("older", "10.0.0.50", 1), // wins
		claim("moved", "10.0.0.60", 2), // the database had .4
		claim("lost", "10.0.0.9", 3),   // the database lacked it
		claim("excl", "10.0.0.210", 4), // not allowed
		{Subnet: "s", Owner: pod("kept"), IPs: kept.IPs, MAC: kept.MAC, Allocated: t0},
	}
	res, err := m.Reconcile(ctx, claims)
	must(t, err)
	if want := []ipam.Owner{pod("lost"), pod("moved"), pod("older")}; !slices.Equal(res.Adopted, want) {
		t.Errorf("adopted %v, want %v", res.Adopted, want)
	}
	if want := []ipam.Owner{pod("stale")}; !slices.Equal(res.Released, want) {
		t.Errorf("released %v, want %v", res.Released, want)
	}
	if len(res.Conflicts) != 2 || res.Conflicts[0].Claim.Owner != pod("excl") || !errors.Is(res.Conflicts[0].Err, ipam.ErrExcluded) ||
		res.Conflicts[1].Claim.Owner != pod("newer") || res.Conflicts[1].Holder != pod("older") || !errors.Is(res.Conflicts[1].Err, ipam.ErrConflict) {
		t.Errorf("conflicts %+v", res.Conflicts)
	}
	if got, _ := m.Get(pod("kept")); !equalAllocations([]ipam.Allocation{got}, []ipam.Allocation{kept}) {
		t.Errorf("matching allocation changed: %+v", got)
	}
	if o, _ := m.Owner("s", addrs("10.0.0.60")[0]); o != pod("moved") {
		t.Errorf("10.0.0.60 held by %v", o)
	}
	checkUnique(t, m.Allocations())
	// Durable, and a second run changes nothing.
	commits := commitCount(st)
	again, err := m.Reconcile(ctx, claims)
	must(t, err)
	if len(again.Adopted)+len(again.Released) != 0 || len(again.Conflicts) != 2 || commitCount(st) != commits {
		t.Errorf("second reconcile changed things: %+v", again)
	}
	m2, err := ipam.New(ctx, st, nil)
	must(t, err)
	if !equalAllocations(m.Allocations(), m2.Allocations()) {
		t.Error("reconciled state not in the store")
	}
}

func TestReconcileMACConflict(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24")})
	mac := net.HardwareAddr{0x0a, 1, 2, 3, 4, 5}
	res, err := m.Reconcile(ctx, []ipam.Allocation{
		{Subnet: "s", Owner: pod("b"), IPs: addrs("10.0.0.8"), MAC: mac, Allocated: time.Unix(2, 0)},
		{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.7"), MAC: mac, Allocated: time.Unix(1, 0)},
	})
	must(t, err)
	if len(res.Conflicts) != 1 || res.Conflicts[0].Claim.Owner != pod("b") || res.Conflicts[0].Holder != pod("a") {
		t.Errorf("conflicts %+v", res.Conflicts)
	}
}

// A database that already holds a newer claim's allocation (a dead pod's leftover port, say)
// does not let it beat an older claim on the same address: the oldest wins, whatever the
// database held.
func TestReconcileOlderClaimBeatsHeld(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1")})
	dead, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("dead")}) // .2
	must(t, err)
	claims := []ipam.Allocation{
		{Subnet: "s", Owner: pod("dead"), IPs: dead.IPs, MAC: dead.MAC, Allocated: time.Now()},
		{Subnet: "s", Owner: pod("live"), IPs: dead.IPs, Allocated: time.Now().Add(-time.Hour)},
	}
	res, err := m.Reconcile(ctx, claims)
	must(t, err)
	if want := []ipam.Owner{pod("live")}; !slices.Equal(res.Adopted, want) {
		t.Errorf("adopted %v, want %v", res.Adopted, want)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Claim.Owner != pod("dead") || res.Conflicts[0].Holder != pod("live") ||
		!errors.Is(res.Conflicts[0].Err, ipam.ErrConflict) {
		t.Errorf("conflicts %+v, want dead's claim lost to live", res.Conflicts)
	}
	if o, _ := m.Owner("s", dead.IPs[0]); o != pod("live") {
		t.Errorf("%v held by %v, want the older claim's pod", dead.IPs[0], o)
	}
	if _, ok := m.Get(pod("dead")); ok {
		t.Error("the newer claim still holds an allocation")
	}
	checkUnique(t, m.Allocations())
	commits := commitCount(st)
	again, err := m.Reconcile(ctx, claims)
	must(t, err)
	if len(again.Adopted)+len(again.Released) != 0 || len(again.Conflicts) != 1 || commitCount(st) != commits {
		t.Errorf("second reconcile changed things: %+v", again)
	}
}
