package ipam_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

// BenchmarkNew100k: building the in-memory state of 100,000 allocations from a loaded State
// (the store's part of start-up is measured in sqlitestore's BenchmarkOpenLoad100k).
func BenchmarkNew100k(b *testing.B) {
	ctx := context.Background()
	st := stateStore{ipam.State{Subnets: []ipam.Subnet{{Name: "s", CIDRs: prefixes("10.0.0.0/8")}}}}
	ip := netip.MustParseAddr("10.0.0.1")
	for i := 0; i < 100000; i++ {
		a := ipam.Allocation{Subnet: "s", Owner: ipam.Owner{Pod: fmt.Sprintf("ns/p%d", i), Interface: "eth0"},
			IPs: []netip.Addr{ip}, MAC: []byte{0x0a, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}}
		st.st.Allocations = append(st.st.Allocations, a)
		ip = ip.Next()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := ipam.New(ctx, st, nil)
		must2(b, err)
	}
}

func must2(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
