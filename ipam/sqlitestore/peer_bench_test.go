package sqlitestore_test

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/allocator"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/disk"
)

// The peer: host-local's allocator over its disk store (one file per address, a file lock
// per call, no fsync), on the same workloads as the SQLite benchmarks.

func hostLocal(b *testing.B) (*allocator.IPAllocator, *disk.Store) {
	_, subnet, _ := net.ParseCIDR("10.0.0.0/8")
	rs := allocator.RangeSet{{Subnet: types.IPNet(*subnet)}}
	if err := rs.Canonicalize(); err != nil {
		b.Fatal(err)
	}
	store, err := disk.New("bench", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return allocator.NewIPAllocator(&rs, store, 0), store
}

// hostLocalGet serializes like the host-local plugin does, with the store's file lock.
func hostLocalGet(b *testing.B, a *allocator.IPAllocator, s *disk.Store, mu *sync.Mutex, id string) {
	mu.Lock() // the file lock is per process-wide fd; a mutex keeps goroutines from sharing it
	defer mu.Unlock()
	if err := s.Lock(); err != nil {
		b.Error(err)
		return
	}
	defer s.Unlock()
	if _, err := a.Get(id, "eth0", nil); err != nil {
		b.Error(err)
	}
}

func BenchmarkAllocateHostLocal(b *testing.B) {
	a, s := hostLocal(b)
	var mu sync.Mutex
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hostLocalGet(b, a, s, &mu, fmt.Sprintf("c%d", i))
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
}

func BenchmarkAllocateHostLocalParallel(b *testing.B) {
	a, s := hostLocal(b)
	var mu sync.Mutex
	var n atomic.Int64
	b.SetParallelism(64 / max(1, testingProcs()))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			hostLocalGet(b, a, s, &mu, fmt.Sprintf("c%d", n.Add(1)))
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
}
