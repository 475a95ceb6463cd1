package ipam_test

import (
	"context"
	"net"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/fakestore"
)

// TestLoadInconsistentStore: New indexes a consistent store in bulk; when a store breaks the
// invariants, it falls back to one-by-one indexing that skips each bad record, so memory
// still has one holder per address and MAC, and the good records all load.
func TestLoadInconsistentStore(t *testing.T) {
	subnet := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24")}
	good := ipam.Allocation{Subnet: "s", Owner: pod("good"), IPs: addrs("10.0.0.9"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 9}}
	tests := []struct {
		name      string
		bad       []ipam.Allocation
		wantCount int // allocations loaded, good included
	}{
		{"consistent", []ipam.Allocation{
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
		}, 2},
		{"one address twice", []ipam.Allocation{
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
			{Subnet: "s", Owner: pod("b"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 3}},
		}, 2},
		{"one mac twice", []ipam.Allocation{
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
			{Subnet: "s", Owner: pod("b"), IPs: addrs("10.0.0.3"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
		}, 2},
		{"unknown subnet", []ipam.Allocation{
			{Subnet: "gone", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
		}, 1},
		{"multicast mac", []ipam.Allocation{
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x01, 0, 0, 0, 0, 2}},
		}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := fakestore.New()
			changes := []ipam.Change{{PutSubnet: &subnet}, {PutAllocation: &good}}
			for i := range tt.bad {
				changes = append(changes, ipam.Change{PutAllocation: &tt.bad[i]})
			}
			must(t, st.Commit(ctx, changes))
			m, err := ipam.New(ctx, st, nil)
			must(t, err)
			live := m.Allocations()
			checkUnique(t, live)
			if len(live) != tt.wantCount {
				t.Errorf("loaded %d allocations, want %d: %v", len(live), tt.wantCount, live)
			}
			if a, ok := m.Get(good.Owner); !ok || a.IPs[0] != good.IPs[0] {
				t.Errorf("the good allocation: %v %v", a, ok)
			}
			// What was loaded is really held: nobody else gets it.
			next, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("new")})
			must(t, err)
			for _, a := range live {
				if a.Subnet == "s" && a.IPs[0] == next.IPs[0] {
					t.Errorf("new allocation got %s, held by %s", next.IPs[0], a.Owner)
				}
			}
		})
	}
}
