package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

type options struct {
	bin                     string
	seconds                 float64
	rounds, workers, flips  int
	sources                 int
	nodeIPService, perRound bool
}

func main() {
	var o options
	benchkit.BinFlag(&o.bin)
	flag.Float64Var(&o.seconds, "seconds", 10, "length of each load round (both paths, each client alternating between them)")
	flag.IntVar(&o.rounds, "rounds", 4, "load rounds per Service")
	flag.IntVar(&o.workers, "workers", 4, "concurrent clients in the site namespace")
	flag.IntVar(&o.sources, "sources", 250, "site client addresses taken in turn (see bench.sources; 0: one)")
	flag.IntVar(&o.flips, "flips", 20, "endpoint changes timed to the health check's new answer (each way)")
	flag.BoolVar(&o.nodeIPService, "node-ip-service", false, "also publish a Service on the host's own address (externalIPs: the node IP), which makes edgeovn check the host's listeners at each rules pass")
	flag.BoolVar(&o.perRound, "per-round", false, "also print each round's p50 and p99 per path")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "lbbench:", err)
		os.Exit(1)
	}
}

const node = "bench-1"

func run(o options) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{LANPeer: true})
	if err != nil {
		return err
	}
	defer rig.Stop()
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: node, BinDir: o.bin, Extra: []string{"--log-level=warn"}}); err != nil {
		return err
	}
	b, err := newBench(ctx, rig)
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.setUp(ctx, o.sources); err != nil {
		return err
	}
	if o.nodeIPService {
		if err := b.nodeIPService(ctx); err != nil {
			return err
		}
	}
	fmt.Printf("\nA site client on the host's LAN (%d workers, %d addresses, %d x %.0f s rounds, each client alternating between the two paths request by request), 2 backends on the host, kube-proxy absent", o.workers, max(o.sources, 1), o.rounds, o.seconds)
	if o.nodeIPService {
		fmt.Print(", a Service on the node's own address")
	}
	fmt.Print("\n\n")
	fmt.Println("| policy | path | requests/s | p50 | p99 | failed | LB IP / NodePort |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|")
	for _, svc := range b.services {
		lb, np, err := b.compare(ctx, svc, o)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | LoadBalancer IP %s | %.0f | %s | %s | %d %s | rate %.2fx (%.2fx without the lost requests' stalls), p50 %.2fx, p99 %.2fx |\n", svc.policy, svc.lbAddr, lb.rate(),
			benchkit.Ms(benchkit.Pct(lb.lat, 50)), benchkit.Ms(benchkit.Pct(lb.lat, 99)), lb.failed, lb.firstErr,
			lb.rate()/np.rate(), lb.servingRate()/np.servingRate(), ratio(benchkit.Pct(lb.lat, 50), benchkit.Pct(np.lat, 50)), ratio(benchkit.Pct(lb.lat, 99), benchkit.Pct(np.lat, 99)))
		fmt.Printf("| %s | NodePort %s | %.0f | %s | %s | %d %s | |\n", svc.policy, svc.npAddr, np.rate(),
			benchkit.Ms(benchkit.Pct(np.lat, 50)), benchkit.Ms(benchkit.Pct(np.lat, 99)), np.failed, np.firstErr)
	}
	down, up, err := b.healthFlips(ctx, o.flips)
	if err != nil {
		return err
	}
	fmt.Printf("\n| measure | p50 | p95 | max |\n|---|---:|---:|---:|\n")
	for _, r := range []struct {
		what string
		d    []time.Duration
	}{{"local endpoint gone (EndpointSlice update sent) to health check 503", down}, {"local endpoint back to health check 200", up}} {
		fmt.Printf("| %s (%d) | %s | %s | %s |\n", r.what, len(r.d), benchkit.Ms(benchkit.Pct(r.d, 50)), benchkit.Ms(benchkit.Pct(r.d, 95)), benchkit.Ms(benchkit.Pct(r.d, 100)))
	}
	return nil
}

// ratio is a/b for durations.
func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
