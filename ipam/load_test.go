package ipam_test

import (
	"context"
	"net"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
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
		{"one owner twice", []ipam.Allocation{
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.3"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 3}},
		}, 2},
		{"two interfaces of one pod", []ipam.Allocation{
			{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
			{Subnet: "s", Owner: ipam.Owner{Pod: pod("a").Pod, Interface: "net1"}, IPs: addrs("10.0.0.3"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 3}},
		}, 3},
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
			st := stateStore{ipam.State{Subnets: []ipam.Subnet{subnet}, Allocations: append([]ipam.Allocation{good}, tt.bad...)}}
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

// TestLoadedPodInterfaces: a pod's interfaces loaded in bulk are each found, released
// together by ReleasePod, and a neighbour loaded next to them is untouched.
func TestLoadedPodInterfaces(t *testing.T) {
	ctx := context.Background()
	subnet := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24")}
	eth0 := ipam.Owner{Pod: "ns/a", Interface: "eth0"}
	net1 := ipam.Owner{Pod: "ns/a", Interface: "net1"}
	other := ipam.Owner{Pod: "ns/b", Interface: "eth0"}
	st := stateStore{ipam.State{Subnets: []ipam.Subnet{subnet}, Allocations: []ipam.Allocation{
		{Subnet: "s", Owner: eth0, IPs: addrs("10.0.0.2"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 2}},
		{Subnet: "s", Owner: other, IPs: addrs("10.0.0.4"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 4}},
		{Subnet: "s", Owner: net1, IPs: addrs("10.0.0.3"), MAC: net.HardwareAddr{0x0a, 0, 0, 0, 0, 3}},
	}}}
	m, err := ipam.New(ctx, st, nil)
	must(t, err)
	for o, ip := range map[ipam.Owner]string{eth0: "10.0.0.2", net1: "10.0.0.3", other: "10.0.0.4"} {
		if a, ok := m.Get(o); !ok || a.IPs[0] != addrs(ip)[0] {
			t.Errorf("%s after load: %v %v, want %s", o, a.IPs, ok, ip)
		}
	}
	must(t, m.ReleasePod(ctx, "ns/a"))
	if got := m.Allocations(); len(got) != 1 || got[0].Owner != other {
		t.Errorf("after ReleasePod(ns/a): %v, want only %s", got, other)
	}
	// A new interface of b reallocates b's list instead of writing over a's old slot.
	b1 := ipam.Owner{Pod: "ns/b", Interface: "net1"}
	_, err = m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: b1})
	must(t, err)
	if _, ok := m.Get(other); !ok {
		t.Errorf("%s lost after allocating for %s", other, b1)
	}
}
