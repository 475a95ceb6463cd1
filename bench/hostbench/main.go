package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Request is what a run measures.
type Request struct {
	Bin    string // holds edgeovn and edgeovn-cni
	Rounds int    // alternating same-host and cross-host rounds
	Pings  int    // pings per round, 10 ms apart
	MB     int    // megabytes sent per throughput round
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Rounds, "rounds", 3, "rounds per path, alternating same-host and cross-host")
	flag.IntVar(&req.Pings, "pings", 200, "pings per round, 10 ms apart")
	flag.IntVar(&req.MB, "mb", 64, "megabytes sent one way per throughput round")
	flag.Parse()
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "hostbench:", err)
		os.Exit(1)
	}
}

// path is one measured pair of pods.
type path struct {
	name     string
	from, to *podsim.Sandbox
	rtts     []time.Duration
	mbits    []float64
}

func run(req Request) error {
	if err := harness.PreflightCluster(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cl, err := startCluster(ctx, req.Bin, 2)
	if err != nil {
		return err
	}
	defer cl.c.Stop()
	a1, a2, b, err := cl.pods(ctx)
	if err != nil {
		return err
	}
	paths := []*path{{name: "same host", from: a1, to: a2}, {name: "cross host (Geneve)", from: a1, to: b}}
	for _, p := range paths { // warm up: neighbours resolved, flows installed
		if err := benchkit.WarmUp(ctx, p.from, p.to.IP()); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	for round := range req.Rounds {
		for i := range paths {
			p := paths[(i+round)%len(paths)]
			if err := measure(ctx, p, req); err != nil {
				return fmt.Errorf("%s, round %d: %w", p.name, round+1, err)
			}
		}
	}
	printTable(req, paths)
	return nil
}

func measure(ctx context.Context, p *path, req Request) error {
	rtts, err := benchkit.PingTimes(ctx, p.from.NetnsName(), p.to.IP(), req.Pings)
	if err != nil {
		return err
	}
	p.rtts = append(p.rtts, rtts...)
	mbit, err := throughput(ctx, p.from.Netns, p.to.Netns, p.to.IP(), int64(req.MB)<<20)
	if err != nil {
		return err
	}
	p.mbits = append(p.mbits, mbit)
	return nil
}

func printTable(req Request, paths []*path) {
	fmt.Printf("\nPod to pod on a harness.Cluster (userspace datapath, Geneve between hosts), %d rounds per path: %d pings 10 ms apart and %d MB of TCP one way per round; load average %s\n",
		req.Rounds, req.Pings, req.MB, benchkit.LoadAvg())
	fmt.Println("| path | ping p50 | ping p95 | TCP Mbit/s, median | TCP Mbit/s, per round |")
	fmt.Println("|---|---:|---:|---:|---|")
	for _, p := range paths {
		fmt.Printf("| %s | %s | %s | %.0f | %s |\n", p.name, msec(benchkit.Pct(p.rtts, 50)), msec(benchkit.Pct(p.rtts, 95)),
			benchkit.Median(p.mbits), benchkit.Rounds(p.mbits))
	}
}
