package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// result is one workload's figures.
type result struct {
	workload  string
	edgeovn   string
	hostLocal string
	goal      string
}

func run(ctx context.Context, cfg config, out io.Writer) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	work, err := os.MkdirTemp(cfg.Dir, "ipambench-")
	if err != nil {
		return fmt.Errorf("create working directory: %w", err)
	}
	defer os.RemoveAll(work)
	floor, err := fsyncFloor(filepath.Join(work, "fsync"), cfg.Fsyncs)
	if err != nil {
		return err
	}
	var rows []result
	serial, err := edgeovnSerial(ctx, filepath.Join(work, "serial.db"), cfg.Serial)
	if err != nil {
		return err
	}
	hlSerial, err := hostLocalAllocate(filepath.Join(work, "hl-serial"), cfg.Peer, 1)
	if err != nil {
		return err
	}
	rows = append(rows, result{"serial durable allocations", perSecond(serial), perSecond(hlSerial), "≥ 2,000/s"})
	conc, err := edgeovnConcurrent(ctx, filepath.Join(work, "concurrent.db"), cfg.Concurrent, cfg.Workers)
	if err != nil {
		return err
	}
	hlConc, err := hostLocalAllocate(filepath.Join(work, "hl-concurrent"), cfg.Peer, cfg.Workers)
	if err != nil {
		return err
	}
	rows = append(rows, result{fmt.Sprintf("%d concurrent allocators", cfg.Workers), perSecond(conc), perSecond(hlConc), "≥ 20,000/s"})
	load, err := edgeovnOpenLoad(ctx, filepath.Join(work, "load.db"), cfg.Load, cfg.Runs)
	if err != nil {
		return err
	}
	rows = append(rows, result{fmt.Sprintf("open + load of %s allocations", thousands(cfg.Load)),
		millis(load), "n/a (no load step: one file per address)", "< 300 ms"})
	rows = append(rows, result{"fsync floor (write + fdatasync of one page)", perSecond(floor), "", "about 2,200/s"})
	printTable(out, rows)
	fmt.Fprintf(out, "\nedgeovn: %s serial and %s concurrent allocations into a 10.0.0.0/8 subnet, each on disk "+
		"(WAL, fsync) before the call returns; open + load: median of %d.\n", thousands(cfg.Serial), thousands(cfg.Concurrent), cfg.Runs)
	fmt.Fprintf(out, "host-local: %s allocations per workload. Its store writes one file per address without fsync "+
		"(a power cut can lose or tear an allocation) and re-reads every file of its directory on each allocation, so the "+
		"cost of one grows with the addresses held and a run's time with the square of its size (10,000 would take about "+
		"%d times as long as %s); its file lock serialises concurrent clients, so they do not add up.\n",
		thousands(cfg.Peer), (10000*10000)/(cfg.Peer*cfg.Peer), thousands(cfg.Peer))
	return nil
}

// rate is a count of operations over a duration.
type rate struct {
	n int
	d time.Duration
}

func perSecond(r rate) string {
	return thousands(int(float64(r.n)/r.d.Seconds()+0.5)) + "/s"
}

func millis(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func printTable(out io.Writer, rows []result) {
	fmt.Fprintln(out, "| workload | edgeovn (SQLite, WAL, synchronous=FULL: durable) | host-local (disk store, no fsync) | goal |")
	fmt.Fprintln(out, "|---|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", r.workload, r.edgeovn, r.hostLocal, r.goal)
	}
}
