package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/images"
)

const nodeName = "bench-1"

type config struct {
	bin      string
	pods     int
	restarts int
	rounds   int
	verbose  bool
	keep     bool
}

func main() {
	var c config
	benchkit.BinFlag(&c.bin)
	flag.IntVar(&c.pods, "pods", 50, "pods created at once, per plugin")
	flag.IntVar(&c.restarts, "restarts", 5, "edgeovn restarts timed to node Ready")
	flag.IntVar(&c.rounds, "rounds", 2, "rounds per network, alternating which goes first")
	flag.BoolVar(&c.verbose, "v", false, "log the rig's progress")
	flag.BoolVar(&c.keep, "keep", false, "keep the rig's directory (logs) after the run")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "podbench:", err)
		os.Exit(1)
	}
}

// bench is one run: the rig, edgeovn in it and the real node.
type bench struct {
	cfg    config
	rig    *harness.Rig
	node   *harness.RealNode
	daemon daemon.Spec
	work   string

	canaries int
}

func run(c config) error {
	if err := harness.Preflight(harness.RealNodeParts...); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	work, err := os.MkdirTemp("", "podbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	tars, err := images.Build(ctx, work)
	if err != nil {
		return err
	}
	log := slog.New(slog.DiscardHandler)
	if c.verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	rig, err := harness.Start(ctx, harness.Options{Log: log, Keep: c.keep})
	if err != nil {
		return err
	}
	defer rig.Stop()
	b := &bench{cfg: c, rig: rig, work: work,
		daemon: daemon.Spec{Node: nodeName, BinDir: c.bin, Extra: []string{"--log-level=warn"}}}
	if err := b.start(ctx, tars); err != nil {
		return err
	}
	return b.report(ctx)
}

// start runs edgeovn, waits for its CNI config, then starts the real node on it.
func (b *bench) start(ctx context.Context, tars []string) error {
	if _, err := daemon.Start(ctx, b.rig, b.daemon); err != nil {
		return err
	}
	k := daemon.Kubelet(b.rig, nodeName)
	if err := k.WaitReady(ctx); err != nil {
		return err
	}
	var err error
	b.node, err = b.rig.StartRealNode(ctx, harness.RealNodeRequest{Name: nodeName, CNIConfDir: k.ConfDir, CNIBinDir: k.BinDir,
		Images: tars, SandboxImage: images.Pause})
	if err != nil {
		return err
	}
	_, err = b.node.WaitReady(ctx, "True")
	return err
}

func (b *bench) report(ctx context.Context) error {
	nets := b.networks()
	samples := make([]sample, len(nets))
	for r := range b.cfg.rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			if err := nets[i].use(ctx); err != nil {
				return fmt.Errorf("%s: %w", nets[i].name, err)
			}
			s, err := b.createAtOnce(ctx, fmt.Sprintf("%s-%d", nets[i].short, r), b.cfg.pods, nets[i].prefix)
			if err != nil {
				return fmt.Errorf("%s: %w", nets[i].name, err)
			}
			samples[i].add(s)
		}
	}
	if err := nets[0].use(ctx); err != nil {
		return err
	}
	restarts, err := b.restarts(ctx)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if b.cfg.rounds > 0 {
		printPods(b.cfg, nets, samples)
	}
	printRestarts(restarts)
	return nil
}

func printPods(c config, nets []network, samples []sample) {
	fmt.Printf("\nPod create to Running through a real node (kubelet v1.34, containerd 2, runc), %d pods created at once, %d rounds per network alternating, one host (userspace datapath)\n\n", c.pods, c.rounds)
	fmt.Println("| network | p50 | p95 | max | all Running, per round | load average, per round |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	for i, n := range nets {
		samples[i].row(n.name)
	}
	fmt.Printf("\nedgeovn / reference: p50 %.2fx, p95 %.2fx\n", ratio(samples[0].pct(50), samples[1].pct(50)), ratio(samples[0].pct(95), samples[1].pct(95)))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
