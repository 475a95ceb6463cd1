package ipam_test

import (
	"context"
	"math"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

// TestUsage: capacity is the usable range less the gateway and the excludes; used follows
// allocations and releases; IPv6 capacity does not overflow; the subnets come sorted.
func TestUsage(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t,
		ipam.Subnet{Name: "b-dual", CIDRs: prefixes("10.9.0.0/24", "fd00::/64"), Gateways: addrs("10.9.0.1", "fd00::1"),
			Excludes: []ipam.Range{rng(t, "10.9.0.200..10.9.0.255")}},
		ipam.Subnet{Name: "a-small", CIDRs: prefixes("10.8.0.0/29"), Gateways: addrs("10.8.0.1")},
	)
	for _, name := range []string{"p1", "p2", "p3"} {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: "b-dual", Owner: pod(name)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Release(ctx, pod("p2")); err != nil {
		t.Fatal(err)
	}
	got := m.Usage()
	if len(got) != 3 {
		t.Fatalf("Usage = %+v, want 3 CIDRs", got)
	}
	// a-small: /29 has 6 usable, less the gateway. b-dual v4: 254 usable, less the gateway
	// and .200-.254 inside the usable range (55). v6: 2^64 - 1 usable, less the gateway.
	want := []struct {
		subnet, cidr string
		used         int
		capacity     float64
	}{{"a-small", "10.8.0.0/29", 0, 5}, {"b-dual", "10.9.0.0/24", 2, 254 - 1 - 55}, {"b-dual", "fd00::/64", 2, math.Pow(2, 64) - 2}}
	for i, w := range want {
		g := got[i]
		if g.Subnet != w.subnet || g.CIDR.String() != w.cidr || g.Used != w.used || g.Capacity != w.capacity {
			t.Errorf("usage %d = %+v, want %+v", i, g, w)
		}
	}
}
