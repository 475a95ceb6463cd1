package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

var benchSubnet = ipam.Subnet{Name: "bench", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	Gateways: []netip.Addr{netip.MustParseAddr("10.0.0.1")}}

func openIPAM(ctx context.Context, path string) (*sqlitestore.Store, *ipam.IPAM, error) {
	st, _, err := sqlitestore.OpenOrReset(ctx, path, nil)
	if err != nil {
		return nil, nil, err
	}
	m, err := ipam.New(ctx, st, nil)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, m, nil
}

func owner(i int64) ipam.Owner {
	return ipam.Owner{Pod: fmt.Sprintf("bench/p%d", i), Interface: "eth0"}
}

// openBenchIPAM opens the IPAM at path with the bench subnet in place.
func openBenchIPAM(ctx context.Context, path string) (*sqlitestore.Store, *ipam.IPAM, error) {
	st, m, err := openIPAM(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	if err := m.EnsureSubnet(ctx, benchSubnet); err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, m, nil
}

// edgeovnSerial allocates n addresses one after the other, each durable before the next.
func edgeovnSerial(ctx context.Context, path string, n int) (rate, error) {
	st, m, err := openBenchIPAM(ctx, path)
	if err != nil {
		return rate{}, err
	}
	defer st.Close()
	start := time.Now()
	for i := range n {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: benchSubnet.Name, Owner: owner(int64(i))}); err != nil {
			return rate{}, fmt.Errorf("serial allocation %d: %w", i, err)
		}
	}
	return rate{n, time.Since(start)}, nil
}

// edgeovnConcurrent allocates n addresses from workers goroutines; group commit shares the
// fsyncs between them.
func edgeovnConcurrent(ctx context.Context, path string, n, workers int) (rate, error) {
	st, m, err := openBenchIPAM(ctx, path)
	if err != nil {
		return rate{}, err
	}
	defer st.Close()
	return concurrently(n, workers, func(i int64) error {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: benchSubnet.Name, Owner: owner(i)}); err != nil {
			return fmt.Errorf("concurrent allocation %d: %w", i, err)
		}
		return nil
	})
}

// edgeovnOpenLoad fills a database with n allocations, then times opening it (with its
// integrity check) and building the IPAM from it, runs times, each in a new process as at
// start-up (a fresh Go heap; the file is in the page cache, as after a restart); it returns
// the median.
func edgeovnOpenLoad(ctx context.Context, path string, n, runs int) (time.Duration, error) {
	if err := fill(ctx, path, n); err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("find own executable: %w", err)
	}
	var times []time.Duration
	for range runs {
		out, err := exec.CommandContext(ctx, self, "-open-child", path).Output()
		if err != nil {
			return 0, fmt.Errorf("open + load in a child process: %w", err)
		}
		var ns int64
		var got int
		if _, err := fmt.Sscan(string(out), &ns, &got); err != nil {
			return 0, fmt.Errorf("child printed %q: %w", out, err)
		}
		if got != n {
			return 0, fmt.Errorf("loaded %d allocations, want %d", got, n)
		}
		times = append(times, time.Duration(ns))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// openChild is the child of edgeovnOpenLoad: it opens and loads the database at path and
// prints how long that took (nanoseconds) and how many allocations it found.
func openChild(ctx context.Context, path string, out io.Writer) error {
	start := time.Now()
	st, m, err := openIPAM(ctx, path)
	if err != nil {
		return err
	}
	d := time.Since(start)
	defer st.Close()
	_, err = fmt.Fprintln(out, d.Nanoseconds(), len(m.Allocations()))
	return err
}

// fill writes n allocations through the store in one transaction, as a long-running
// controller would have left them.
func fill(ctx context.Context, path string, n int) error {
	st, _, err := sqlitestore.OpenOrReset(ctx, path, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	subnet := benchSubnet
	changes := []ipam.Change{{PutSubnet: &subnet}}
	ip := netip.MustParseAddr("10.0.0.2")
	now := time.Now()
	for i := range n {
		b := ip.As4()
		a := ipam.Allocation{Subnet: subnet.Name, Owner: owner(int64(i)), IPs: []netip.Addr{ip},
			MAC: []byte{0x0a, 0x58, b[0], b[1], b[2], b[3]}, Allocated: now}
		changes = append(changes, ipam.Change{PutAllocation: &a})
		ip = ip.Next()
	}
	if err := st.Commit(ctx, changes); err != nil {
		return fmt.Errorf("fill database with %d allocations: %w", n, err)
	}
	return nil
}
