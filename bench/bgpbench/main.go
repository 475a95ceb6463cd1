// Command bgpbench measures edgeovn's BGP speaker against FRR (Debian's frr, run by hand in a
// site router namespace, harness.StartFRR) on a harness.Cluster of one host: the time from a
// pod's ovn.kubernetes.io/bgp annotation to its /32 in FRR's RIB, and from the pod's deletion
// to the route's withdrawal (p50/p95 over -pods pods), and edgeovn's RSS with BGP off (no
// neighbour) and on (one peer, the pods announced).
//
//	go run ./bench/bgpbench -bin bin      (as root, after make build; needs frr)
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
	Bin    string
	Pods   int
	Settle time.Duration // wait before reading RSS
	// OffOnly measures the RSS without a neighbour only (a build without BGP, for comparison).
	OffOnly bool
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Pods, "pods", 50, "pods announced and withdrawn")
	flag.DurationVar(&req.Settle, "settle", 10*time.Second, "idle time before RSS is read")
	flag.BoolVar(&req.OffOnly, "off-only", false, "only measure RSS with no neighbour (works with a build that has no BGP)")
	flag.Parse()
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "bgpbench:", err)
		os.Exit(1)
	}
}

func run(req Request) error {
	if err := harness.PreflightCluster(); err != nil {
		return err
	}
	if err := harness.FRRAvailable(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	w, err := startWorld(ctx, req.Bin)
	if err != nil {
		return err
	}
	defer w.close()
	rssOff, err := w.rss(ctx, req.Settle)
	if err != nil {
		return err
	}
	if req.OffOnly {
		fmt.Printf("edgeovn RSS, no neighbour configured: %.1f MiB\n", float64(rssOff)/1024)
		return nil
	}
	fmt.Fprintln(os.Stderr, "BGP off measured; restarting edgeovn with a neighbour")
	if err := w.enableBGP(ctx); err != nil {
		return err
	}
	announce, withdraw, err := w.measure(ctx, req.Pods)
	if err != nil {
		return err
	}
	rssOn, err := w.rss(ctx, req.Settle)
	if err != nil {
		return err
	}
	speaker := w.speakerRSS()
	fmt.Printf("bgpbench: 1 host, FRR 8.4 peer, %d pods (annotated bgp=local one at a time)\n", req.Pods)
	fmt.Printf("%-42s %10s %10s\n", "", "p50", "p95")
	fmt.Printf("%-42s %10s %10s\n", "annotation -> /32 in the peer's RIB", benchkit.Ms(benchkit.Pct(announce, 50)), benchkit.Ms(benchkit.Pct(announce, 95)))
	fmt.Printf("%-42s %10s %10s\n", "pod deleted -> withdrawn from the RIB", benchkit.Ms(benchkit.Pct(withdraw, 50)), benchkit.Ms(benchkit.Pct(withdraw, 95)))
	fmt.Printf("edgeovn RSS: BGP off %.1f MiB, BGP on (1 peer, %d pods announced, then withdrawn) %.1f MiB + edgeovn-bgp %.1f MiB = %.1f MiB; load average %s\n",
		float64(rssOff)/1024, req.Pods, float64(rssOn)/1024, float64(speaker)/1024, float64(rssOn+speaker)/1024, loadavg())
	return nil
}
