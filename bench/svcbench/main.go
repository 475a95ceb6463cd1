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

func main() {
	var o options
	benchkit.BinFlag(&o.bin)
	flag.IntVar(&o.services, "services", 1000, "Services (3 endpoints each) programmed from a cold start")
	flag.IntVar(&o.changes, "changes", 50, "endpoint changes timed one after the other")
	flag.IntVar(&o.pods, "pods", 20, "pods whose CNI ADD is timed with the Services present")
	flag.BoolVar(&o.trace, "trace", false, "also print where each ADD's time goes: the daemon's steps (from its debug log), the plugin execs, and per ADD the CPU time of each of the rig's processes and the OVN daemons' recomputes")
	flag.BoolVar(&keep, "keep", false, "keep the rig's directory (logs, databases) and pause before tearing down")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "svcbench:", err)
		os.Exit(1)
	}
}

type options struct {
	bin                     string
	services, changes, pods int
	trace                   bool
}

const node = "bench-1"

var keep bool

func run(o options) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{Keep: keep})
	if err != nil {
		return err
	}
	defer rig.Stop()
	b, err := newBench(ctx, rig)
	if err != nil {
		return err
	}
	defer b.close()
	if err := b.createServices(ctx, o.services); err != nil {
		return err
	}
	start := time.Now()
	level := map[bool]string{true: "debug", false: "warn"}[keep || o.trace]
	proc, err := daemon.Start(ctx, rig, daemon.Spec{Node: node, BinDir: o.bin, Extra: []string{"--log-level=" + level}})
	if err != nil {
		return err
	}
	cold, rows, err := b.waitProgrammed(ctx, o.services, start)
	if err != nil {
		return err
	}
	k := daemon.Kubelet(rig, node)
	if err := k.EnsureNode(ctx); err != nil {
		return err
	}
	lat, err := b.endpointChanges(ctx, o.changes)
	if err != nil {
		return err
	}
	var t *tracer
	if o.trace {
		t = &tracer{rig: rig, log: proc.Log, kubelet: k}
	}
	with, err := b.phase(ctx, phaseRequest{kubelet: k, tracer: t, name: "with the Services", prefix: "with", pods: o.pods})
	if err != nil {
		return err
	}
	// The same ADDs on the same host in the same run once the Services are gone: the
	// baseline that says what the Services cost, whatever the machine's load.
	if err := b.deleteServices(ctx, o.services, rows-o.services); err != nil {
		return err
	}
	without, err := b.phase(ctx, phaseRequest{kubelet: k, tracer: t, name: "Services deleted", prefix: "without", pods: o.pods})
	if err != nil {
		return err
	}
	add, base := with.addTimes(), without.addTimes()
	fmt.Printf("\nServices on one host (userspace datapath); edgeovn started with the Services already in the API\n\n")
	fmt.Println("| measure | result | goal |")
	fmt.Println("|---|---:|---|")
	fmt.Printf("| endpoint change to load balancer updated in NB, p50 / p95 (%d changes) | %s / %s | <= 100 ms |\n", o.changes, benchkit.Ms(benchkit.Pct(lat, 50)), benchkit.Ms(benchkit.Pct(lat, 95)))
	fmt.Printf("| %d Services x 3 endpoints programmed, edgeovn start to the last load balancer | %.2f s (%d load balancer rows) | <= 5 s |\n", o.services, cold.Seconds(), rows)
	fmt.Printf("| CNI ADD p50 / p95 with those Services present (%d pods) | %s / %s | <= 40 ms |\n", len(add), benchkit.Ms(benchkit.Pct(add, 50)), benchkit.Ms(benchkit.Pct(add, 95)))
	fmt.Printf("| CNI ADD p50 / p95 in the same run once the Services are deleted (%d pods) | %s / %s | |\n", len(base), benchkit.Ms(benchkit.Pct(base, 50)), benchkit.Ms(benchkit.Pct(base, 95)))
	if o.trace {
		printTrace([]*phase{with, without})
	}
	if keep {
		fmt.Printf("rig kept in %s (netns %s); press enter to tear down\n", rig.Dir, rig.Netns)
		_, _ = fmt.Scanln()
	}
	return nil
}
