package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// fsyncFloor times n rewrites of one 4 KiB page, each followed by fdatasync: no store that
// makes each commit durable on its own can beat this rate on this disk.
func fsyncFloor(path string, n int) (rate, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return rate{}, fmt.Errorf("fsync floor: %w", err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	start := time.Now()
	for i := range n {
		page[0] = byte(i)
		if _, err := f.WriteAt(page, 0); err != nil {
			return rate{}, fmt.Errorf("fsync floor: %w", err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return rate{}, fmt.Errorf("fsync floor: %w", err)
		}
	}
	return rate{n, time.Since(start)}, nil
}
