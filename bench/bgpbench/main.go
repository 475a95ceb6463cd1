// Command bgpbench measures edgeovn's BGP speaker against FRR (Debian's frr, run by hand in a
// site router namespace, harness.StartFRR) on a harness.Cluster of one host: the time from a
// pod's ovn.kubernetes.io/bgp annotation to its /32 in FRR's RIB, and from the pod's deletion
// to the route's withdrawal (p50/p95 over -pods pods), and edgeovn's RSS with BGP off (no
// neighbour) and on (one peer, the pods announced).
//
// With -scale N it first measures at scale: N pods on the host (API objects the controller
// allocates, no sandboxes: the announcement works off the API objects), edgeovn's and
// edgeovn-bgp's RSS and idle CPU (utime+stime over -idle) with BGP off and then on with
// -peers peers (FRR, and gobgpd on the LAN as the second) and the N pods announced, and the
// burst: the N pods annotated bgp=local at once, until each peer's RIB holds all, as pods/s
// (and, before it, their Subnet annotated local and the annotation removed: one API write
// each, the speaker's own announce and withdraw rate).
//
//	go run ./bench/bgpbench -bin bin      (as root, after make build; needs frr)
//	go run ./bench/bgpbench -bin bin -scale 1000 -peers 2 -idle 30s -pods 0   (needs gobgpd too)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
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
	// Scale pods for the scale figures (0: none), Peers peers (1: FRR; 2: FRR and gobgpd),
	// Idle the window idle CPU is measured over.
	Scale, Peers int
	Idle         time.Duration
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Pods, "pods", 50, "pods announced and withdrawn")
	flag.DurationVar(&req.Settle, "settle", 10*time.Second, "idle time before RSS is read")
	flag.BoolVar(&req.OffOnly, "off-only", false, "only measure RSS with no neighbour (works with a build that has no BGP)")
	flag.IntVar(&req.Scale, "scale", 0, "pods for RSS, idle CPU and the burst with BGP off and on (0: skip)")
	flag.IntVar(&req.Peers, "peers", 1, "BGP peers: 1 (FRR) or 2 (FRR and gobgpd)")
	flag.DurationVar(&req.Idle, "idle", 30*time.Second, "with -scale: the idle window CPU is measured over")
	flag.Parse()
	if req.Peers < 1 || req.Peers > 2 {
		fmt.Fprintf(os.Stderr, "bgpbench: -peers %d: want 1 or 2\n", req.Peers)
		os.Exit(2)
	}
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	w, err := startWorld(ctx, req.Bin)
	if err != nil {
		return err
	}
	defer w.close()
	if req.Scale > 0 {
		if err := runScale(ctx, w, req); err != nil {
			return err
		}
		if req.Pods == 0 {
			return nil
		}
		return runLatency(ctx, w, req, 0)
	}
	rssOff, err := w.rss(ctx, req.Settle)
	if err != nil {
		return err
	}
	if req.OffOnly {
		fmt.Printf("edgeovn RSS, no neighbour configured: %.1f MiB\n", float64(rssOff)/1024)
		return nil
	}
	fmt.Fprintln(os.Stderr, "BGP off measured; restarting edgeovn with a neighbour")
	if err := w.enableBGP(ctx, req.Peers); err != nil {
		return err
	}
	return runLatency(ctx, w, req, rssOff)
}

// runScale: -scale pods, edgeovn restarted on them without BGP, its usage; then with the
// peers, the burst, and the usage with every pod announced.
func runScale(ctx context.Context, w *world, req Request) error {
	if req.Peers > 1 {
		if _, err := exec.LookPath("gobgpd"); err != nil {
			return fmt.Errorf("-peers 2 needs gobgpd (apt-get install gobgpd): %w", err)
		}
	}
	start := time.Now()
	names, err := w.scalePods(ctx, req.Scale)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%d pods created and allocated in %v; restarting edgeovn on them without BGP\n", req.Scale, time.Since(start).Round(time.Millisecond))
	if err := w.daemon.Stop(); err != nil {
		return err
	}
	if err := w.start(ctx, nil); err != nil {
		return err
	}
	off, err := w.usage(ctx, req.Settle, req.Idle)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "BGP off measured; restarting edgeovn with the neighbours")
	if err := w.enableBGP(ctx, req.Peers); err != nil {
		return err
	}
	subnetOn, subnetOff, err := w.subnetBurst(ctx, req.Scale)
	if err != nil {
		return err
	}
	b, err := w.burst(ctx, names)
	if err != nil {
		return err
	}
	on, err := w.usage(ctx, req.Settle, req.Idle)
	if err != nil {
		return err
	}
	printScale(req.Scale, req.Peers, off, on, b, subnetOn, subnetOff)
	return nil
}

// runLatency times -pods pods one at a time, annotation to route and deletion to withdrawal,
// then reads edgeovn's RSS (rssOff: with BGP off, 0 when not read).
func runLatency(ctx context.Context, w *world, req Request, rssOff int) error {
	announce, withdraw, err := w.measure(ctx, req.Pods)
	if err != nil {
		return err
	}
	rssOn, err := w.rss(ctx, req.Settle)
	if err != nil {
		return err
	}
	speaker := w.speakerRSS()
	fmt.Printf("\nbgpbench: 1 host, %d peer(s), %d pods (annotated bgp=local one at a time)\n", req.Peers, req.Pods)
	fmt.Printf("%-42s %10s %10s\n", "", "p50", "p95")
	fmt.Printf("%-42s %10s %10s\n", "annotation -> /32 in the peer's RIB", benchkit.Ms(benchkit.Pct(announce, 50)), benchkit.Ms(benchkit.Pct(announce, 95)))
	fmt.Printf("%-42s %10s %10s\n", "pod deleted -> withdrawn from the RIB", benchkit.Ms(benchkit.Pct(withdraw, 50)), benchkit.Ms(benchkit.Pct(withdraw, 95)))
	if rssOff > 0 {
		fmt.Printf("edgeovn RSS: BGP off %.1f MiB, ", float64(rssOff)/1024)
	}
	fmt.Printf("BGP on (%d peer(s), %d pods announced, then withdrawn) %.1f MiB + edgeovn-bgp %.1f MiB = %.1f MiB; load average %s\n",
		req.Peers, req.Pods, float64(rssOn)/1024, float64(speaker)/1024, float64(rssOn+speaker)/1024, loadavg())
	return nil
}
