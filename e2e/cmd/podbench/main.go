// Command podbench measures pod create to Running through a real node (kubelet v1.34 and
// containerd 2 with runc, harness.StartRealNode) for N pods created at once, with edgeovn as
// the network and, in the same run on the same node, with the reference bridge + host-local
// plugins; then restarts edgeovn a few times and times the node back to Ready. It prints
// tables.
//
//	go run ./e2e/cmd/podbench -bin bin -pods 50      (as root; make deps build first)
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/images"
)

const nodeName = "bench-1"

type config struct {
	bin      string
	pods     int
	restarts int
	verbose  bool
	keep     bool
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin", "directory holding edgeovn and edgeovn-cni (make build)")
	flag.IntVar(&c.pods, "pods", 50, "pods created at once, per plugin")
	flag.IntVar(&c.restarts, "restarts", 3, "edgeovn restarts timed to node Ready")
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
}

func run(c config) error {
	if err := harness.Preflight(harness.RealNodeParts...); err != nil {
		return err
	}
	c.bin, _ = filepath.Abs(c.bin)
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
	eovn, err := b.createAtOnce(ctx, "eovn", netip.MustParsePrefix("10.42.0.0/16"))
	if err != nil {
		return fmt.Errorf("edgeovn: %w", err)
	}
	restarts, err := b.restarts(ctx)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	if err := b.switchToReference(ctx); err != nil {
		return fmt.Errorf("reference plugins: %w", err)
	}
	ref, err := b.createAtOnce(ctx, "ref", netip.MustParsePrefix("10.88.0.0/16"))
	if err != nil {
		return fmt.Errorf("reference plugins: %w", err)
	}
	fmt.Printf("\nPod create to Running through a real node (kubelet v1.34, containerd 2, runc), %d pods created at once, one host (userspace datapath)\n\n", b.cfg.pods)
	fmt.Println("| network | p50 | p95 | max | all Running | load average |")
	fmt.Println("|---|---:|---:|---:|---:|---:|")
	eovn.row("edgeovn")
	ref.row("bridge + host-local (reference plugins)")
	fmt.Printf("\nedgeovn p50 / reference p50: %.2fx, p95: %.2fx\n", ratio(eovn.pct(50), ref.pct(50)), ratio(eovn.pct(95), ref.pct(95)))
	printRestarts(restarts)
	return nil
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
