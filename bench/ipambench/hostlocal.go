package main

import (
	"fmt"
	"net"
	"sync"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/allocator"
	"github.com/containernetworking/plugins/plugins/ipam/host-local/backend/disk"
)

// hostLocalAllocate allocates n addresses with host-local's allocator over its disk store
// (one file per address, written without fsync), from workers goroutines. Like the plugin,
// every allocation holds the store's file lock; a mutex stands in for the separate
// processes the plugin runs as, since the lock belongs to one open file.
func hostLocalAllocate(dir string, n, workers int) (rate, error) {
	_, subnet, _ := net.ParseCIDR("10.0.0.0/8")
	rs := allocator.RangeSet{{Subnet: types.IPNet(*subnet)}}
	if err := rs.Canonicalize(); err != nil {
		return rate{}, fmt.Errorf("host-local range: %w", err)
	}
	store, err := disk.New("bench", dir)
	if err != nil {
		return rate{}, fmt.Errorf("host-local store: %w", err)
	}
	defer store.Close()
	a := allocator.NewIPAllocator(&rs, store, 0)
	var mu sync.Mutex
	get := func(id string) error {
		mu.Lock()
		defer mu.Unlock()
		if err := store.Lock(); err != nil {
			return err
		}
		defer store.Unlock()
		_, err := a.Get(id, "eth0", nil)
		return err
	}
	return concurrently(n, workers, func(i int64) error {
		if err := get(fmt.Sprintf("c%d", i)); err != nil {
			return fmt.Errorf("host-local allocation %d: %w", i, err)
		}
		return nil
	})
}
