package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/failover"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

func main() {
	var bin string
	benchkit.BinFlag(&bin)
	pods := flag.Int("pods", 200, "pods created at once")
	killAfter := flag.Int("kill-after", 50, "pods allocated before the leader is killed")
	runs := flag.Int("runs", 3, "runs, each on a fresh rig")
	lease := flag.Duration("lease-duration", 6*time.Second, "both processes' --lease-duration")
	renew := flag.Duration("lease-renew-deadline", 4*time.Second, "both processes' --lease-renew-deadline")
	retry := flag.Duration("lease-retry-period", time.Second, "both processes' --lease-retry-period")
	flag.Parse()
	leaseFlags := []string{"--lease-duration=" + lease.String(), "--lease-renew-deadline=" + renew.String(),
		"--lease-retry-period=" + retry.String()}
	if err := run(bin, *runs, failover.Request{Node: "bench-1", Pods: *pods, KillAfter: *killAfter, LeaseFlags: leaseFlags}); err != nil {
		fmt.Fprintln(os.Stderr, "failoverbench:", err)
		os.Exit(1)
	}
}

func run(bin string, runs int, req failover.Request) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	req.BinDir = bin
	fmt.Printf("lease timings: %v; %d pods created at once, leader SIGKILLed after %d allocated\n\n", req.LeaseFlags, req.Pods, req.KillAfter)
	fmt.Println("| run | allocated at the kill | kill to takeover | kill to next pod allocated | kill to all allocated | addresses held twice |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	var next []time.Duration
	for i := range runs {
		res, err := once(req)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		next = append(next, res.ToNextAllocation)
		fmt.Printf("| %d | %d | %s | %s | %s | %d |\n", i+1, len(res.AtKill), benchkit.Ms(res.ToTakeover),
			benchkit.Ms(res.ToNextAllocation), benchkit.Ms(res.ToAll), len(failover.Duplicates(res)))
	}
	fmt.Printf("\nleader killed to next new pod allocated: p50 %s, max %s (goal <= 10 s)\n",
		benchkit.Ms(benchkit.Pct(next, 50)), benchkit.Ms(benchkit.Pct(next, 100)))
	return nil
}

func once(req failover.Request) (failover.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{})
	if err != nil {
		return failover.Result{}, err
	}
	defer rig.Stop()
	if err := daemon.Kubelet(rig, req.Node).EnsureNode(ctx); err != nil {
		return failover.Result{}, err
	}
	return failover.Run(ctx, rig, req)
}
