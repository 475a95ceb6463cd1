package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// Request is what a run measures.
type Request struct {
	Bin  string // holds edgeovn and edgeovn-cni
	Runs int    // leader kills, and hosts added
	Keep bool   // keep the cluster's directory (logs) after the run
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Runs, "runs", 3, "NB leader kills, and hosts added, on one cluster")
	flag.BoolVar(&req.Keep, "keep", false, "keep the cluster's run directory (every process's log) and print it")
	writerTo := flag.String(writerFlag, "", "internal: run as the NB writer against these members")
	flag.Parse()
	if *writerTo != "" {
		if err := runWriter(*writerTo); err != nil {
			fmt.Fprintln(os.Stderr, "raftbench writer:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "raftbench:", err)
		os.Exit(1)
	}
}

// results are one bench's samples.
type results struct {
	steady    []time.Duration // commit latency without a kill
	toCommit  []time.Duration // leader kill to the next commit
	toPod     []time.Duration // leader kill to the CNI ADD reply of a pod created at the kill
	hostUp    []time.Duration // AddHost returned
	hostReady []time.Duration // edgeovn on it ready
	hostPod   []time.Duration // its first pod's CNI ADD reply
}

func run(req Request) error {
	if err := harness.PreflightCluster(); err != nil {
		return err
	}
	if req.Runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", req.Runs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cl, err := startCluster(ctx, req.Bin, 3, req.Keep)
	if err != nil {
		return err
	}
	defer cl.stop()
	w, err := newWriter(ctx, cl.c.Central, cl.c.Central.NBEndpoint)
	if err != nil {
		return err
	}
	defer w.close()
	var res results
	for i := range req.Runs {
		if err := cl.leaderKill(ctx, w, i, &res); err != nil {
			return fmt.Errorf("leader kill %d: %w", i+1, err)
		}
	}
	for i := range req.Runs {
		if err := cl.newHost(ctx, i, &res); err != nil {
			return fmt.Errorf("new host %d: %w", i+1, err)
		}
	}
	printTable(req, res)
	if req.Keep {
		fmt.Println("run directory kept:", cl.c.Dir)
	}
	return nil
}

func printTable(req Request, r results) {
	fmt.Printf("\nOVN NB and SB as 3-member raft clusters on a harness.Cluster, edgeovn on every host; %d runs; load average %s\n", req.Runs, benchkit.LoadAvg())
	fmt.Println("| measure | p50 | max | per run |")
	fmt.Println("|---|---:|---:|---|")
	row := func(name string, d []time.Duration) {
		fmt.Printf("| %s | %s | %s | %s |\n", name, benchkit.Ms(benchkit.Pct(d, 50)), benchkit.Ms(benchkit.Pct(d, 100)), perRun(d))
	}
	fmt.Printf("| NB commit, no kill (edgeovn's client, leader-only; %d commits in the %v before each kill) | %s | %s | |\n",
		len(r.steady), steadyWindow, benchkit.Ms(benchkit.Pct(r.steady, 50)), benchkit.Ms(benchkit.Pct(r.steady, 100)))
	row("NB leader SIGKILL -> next write committed", r.toCommit)
	row("NB leader SIGKILL -> CNI ADD reply of a pod created at the kill", r.toPod)
	row("new host: AddHost (netns, OVS, ovn-controller)", r.hostUp)
	row("new host: -> edgeovn ready (CNI STATUS)", r.hostReady)
	row("new host: -> first pod's CNI ADD reply", r.hostPod)
}

func perRun(d []time.Duration) string {
	s := ""
	for i, x := range d {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%.2f s", x.Seconds())
	}
	return s
}
