package ipam_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

// TestConcurrentNoDuplicates runs allocators and releasers in parallel (run it with -race)
// and checks that no address or MAC was ever held twice, in memory and after a reload.
func TestConcurrentNoDuplicates(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/22", "fd00::/118"), Gateways: addrs("10.0.0.1")})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				o := ipam.Owner{Pod: fmt.Sprintf("ns/w%d-%d", w, i), Interface: "eth0"}
				if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: o}); err != nil {
					errs <- err
					return
				}
				if i%3 == 0 {
					if err := m.Release(ctx, o); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	live := m.Allocations()
	checkUnique(t, live)
	m2, err := ipam.New(ctx, st, nil)
	must(t, err)
	if reloaded := m2.Allocations(); !equalAllocations(live, reloaded) {
		t.Errorf("store holds %d allocations, memory %d", len(reloaded), len(live))
	}
}

func checkUnique(t *testing.T, as []ipam.Allocation) {
	t.Helper()
	ips := map[netip.Addr]ipam.Owner{}
	macs := map[string]ipam.Owner{}
	for _, a := range as {
		for _, ip := range a.IPs {
			if o, dup := ips[ip]; dup {
				t.Errorf("%s held by %s and %s", ip, o, a.Owner)
			}
			ips[ip] = a.Owner
		}
		if o, dup := macs[a.MAC.String()]; dup {
			t.Errorf("mac %s held by %s and %s", a.MAC, o, a.Owner)
		}
		macs[a.MAC.String()] = a.Owner
	}
}

// TestLargeSubnet fills most of a /16; the allocator keeps a free structure, so this stays
// fast (no timing is asserted; a linear scan per call would make it crawl).
func TestLargeSubnet(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.42.0.0/16"), Gateways: addrs("10.42.0.1"),
		Excludes: []ipam.Range{rng(t, "10.42.1.0..10.42.1.255")}})
	for i := 0; i < 10000; i++ {
		a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: ipam.Owner{Pod: fmt.Sprintf("ns/p%d", i), Interface: "eth0"}})
		must(t, err)
		if i == 9999 && a.IPs[0] != netip.MustParseAddr("10.42.40.17") {
			t.Errorf("10,000th address: %s", a.IPs[0])
		}
	}
	checkUnique(t, m.Allocations())
}

func BenchmarkAllocateFake(b *testing.B) {
	ctx := context.Background()
	m, _ := newIPAM(b, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/8")})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: ipam.Owner{Pod: fmt.Sprintf("ns/p%d", i), Interface: "eth0"}}); err != nil {
			b.Fatal(err)
		}
	}
}
