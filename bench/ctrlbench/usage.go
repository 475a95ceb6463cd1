package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
)

// quietBefore is how long the daemon is left alone before memory and CPU are read.
const quietBefore = 5 * time.Second

// usage is the daemon's resident memory and, when measured, its CPU over an idle span.
type usage struct {
	rssKB, hwmKB int
	anonKB       int // RssAnon: the heaps (Go's and SQLite's), stacks
	fileKB       int // RssFile: the binary's pages in memory
	idle         time.Duration
	cpu          time.Duration // utime+stime over idle
	loadavg      string
	profile      string // where its heap profile went, or why not
	idleProfile  string // where the CPU profile of the idle span went (-profile)
	idleCalls    string // the API requests of the idle span (every client)
	goroutines   string // edgeovn's go_goroutines
	watches      string // the kubeovn.io watches kube-apiserver serves (edgeovn's)
}

// usage reads the daemon's memory after it has been left alone a moment, then its CPU over
// idle (0: not measured) while nothing happens; name names its heap profile (-profile).
func (b *bench) usage(ctx context.Context, name string, idle time.Duration) (usage, error) {
	u := usage{idle: idle}
	select {
	case <-ctx.Done():
		return u, ctx.Err()
	case <-time.After(quietBefore):
	}
	var err error
	if u.rssKB, u.hwmKB, u.anonKB, u.fileKB, err = memory(b.proc.PID); err != nil {
		return u, err
	}
	if idle > 0 {
		t0, err := benchkit.CPUTime(b.proc.PID)
		if err != nil {
			return u, err
		}
		idleProfile := b.prof.cpu(ctx, name+"-idle", idle) // what runs while nothing happens (-profile)
		calls0, callsErr := b.readAPICalls(ctx)
		select {
		case <-ctx.Done():
			return u, ctx.Err()
		case <-time.After(idle):
		}
		t1, err := benchkit.CPUTime(b.proc.PID)
		if err != nil {
			return u, err
		}
		u.cpu = t1 - t0
		u.idleCalls = strings.Replace(b.apiCallsSince(ctx, calls0, callsErr, pods(b)), "over the burst", fmt.Sprintf("over %s idle", idle), 1)
		u.idleProfile = idleProfile()
	}
	u.loadavg = benchkit.LoadAvg()
	u.goroutines, u.watches = b.goroutines(ctx), b.kubeovnWatches(ctx)
	u.profile = b.prof.heap(ctx, name)
	return u, nil
}

// memory reads VmRSS, VmHWM, RssAnon and RssFile (kB) from /proc/PID/status.
func memory(pid int) (rss, hwm, anon, file int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			rss, _ = strconv.Atoi(f[1])
		case "VmHWM:":
			hwm, _ = strconv.Atoi(f[1])
		case "RssAnon:":
			anon, _ = strconv.Atoi(f[1])
		case "RssFile:":
			file, _ = strconv.Atoi(f[1])
		}
	}
	if rss == 0 {
		return 0, 0, 0, 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return rss, hwm, anon, file, nil
}

func printUsage(pods int, steady, restarted usage) {
	fmt.Printf("\nthe whole edgeovn daemon (node and controller roles) with %d pods, from /proc/PID/status and /proc/PID/stat\n\n", pods)
	fmt.Println("| when | VmRSS | of which RssAnon | RssFile (binary) | VmHWM (peak) | idle CPU (utime+stime) | load average |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---|")
	for _, r := range []struct {
		when string
		u    usage
	}{{"after the pods were created", steady}, {"after a restart", restarted}} {
		cpu := "-"
		if r.u.idle > 0 {
			cpu = fmt.Sprintf("%.2f%% of a core over %s", 100*r.u.cpu.Seconds()/r.u.idle.Seconds(), r.u.idle)
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.when, mb(r.u.rssKB), mb(r.u.anonKB), mb(r.u.fileKB), mb(r.u.hwmKB), cpu, r.u.loadavg)
	}
	fmt.Println("\ngoals: resident memory <= 40 MB with 1,000 pods, idle CPU <= 0.5% of a core")
	for _, p := range []string{steady.idleCalls, restarted.idleCalls, steady.profile, steady.idleProfile, restarted.profile} {
		if p != "" {
			fmt.Println(p)
		}
	}
}

// pods is how many pods the bench has created (at least 1, to divide by).
func pods(b *bench) int { return max(b.number, 1) }

func mb(kb int) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }
