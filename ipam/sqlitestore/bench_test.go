package sqlitestore_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

var benchSubnet = ipam.Subnet{Name: "bench", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}

func benchIPAM(b *testing.B) *ipam.IPAM {
	st, m := open(b, filepath.Join(b.TempDir(), "ipam.db"))
	b.Cleanup(func() { st.Close() })
	must(b, m.EnsureSubnet(context.Background(), benchSubnet))
	return m
}

// BenchmarkAllocateSQLite: serial durable allocations (one fsync'd commit each).
func BenchmarkAllocateSQLite(b *testing.B) {
	ctx := context.Background()
	m := benchIPAM(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: "bench", Owner: ipam.Owner{Pod: fmt.Sprintf("ns/p%d", i), Interface: "eth0"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
}

// BenchmarkAllocateSQLiteParallel: 64 concurrent allocators sharing commits (group commit).
func BenchmarkAllocateSQLiteParallel(b *testing.B) {
	ctx := context.Background()
	m := benchIPAM(b)
	var n atomic.Int64
	b.SetParallelism(64 / max(1, testingProcs()))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, err := m.Allocate(ctx, ipam.Request{Subnet: "bench", Owner: ipam.Owner{Pod: fmt.Sprintf("ns/p%d", i), Interface: "eth0"}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
}

// BenchmarkOpenLoad100k: open and load a database holding 100,000 allocations.
func BenchmarkOpenLoad100k(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "ipam.db")
	st, err := sqlitestore.Open(ctx, path, nil)
	must(b, err)
	subnet := benchSubnet
	must(b, st.Commit(ctx, []ipam.Change{{PutSubnet: &subnet}}))
	changes := make([]ipam.Change, 0, 100000)
	ip := netip.MustParseAddr("10.0.0.1")
	for i := 0; i < 100000; i++ {
		a := ipam.Allocation{Subnet: "bench", Owner: ipam.Owner{Pod: fmt.Sprintf("ns/p%d", i), Interface: "eth0"},
			IPs: []netip.Addr{ip}, MAC: []byte{0x0a, 0, 0, byte(i >> 16), byte(i >> 8), byte(i)}}
		changes = append(changes, ipam.Change{PutAllocation: &a})
		ip = ip.Next()
	}
	must(b, st.Commit(ctx, changes))
	must(b, st.Close())
	b.ResetTimer()
	var m *ipam.IPAM
	for i := 0; i < b.N; i++ {
		var st *sqlitestore.Store
		st, m = open(b, path)
		st.Close()
	}
	b.StopTimer()
	if got := len(m.Allocations()); got != 100000 {
		b.Fatalf("loaded %d allocations", got)
	}
}
