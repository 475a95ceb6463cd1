package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

const (
	nodeName  = "bench-1"
	namespace = "ctrlbench"
)

type config struct {
	bin         string
	pods        int
	restartPods int
	idle        time.Duration
	flags       listFlag // more edgeovn flags (to compare settings)
	env         listFlag // more edgeovn environment (GOGC=..., to compare settings)
	keep        bool
	profile     string   // directory for edgeovn's profiles; "" none
	floor       bool     // the bare annotator instead of edgeovn (burst only)
	compareBins listFlag // other builds whose memory is read on the same rig and pods
	bgp         bool     // also read the memory with a BGP neighbour (edgeovn and edgeovn-bgp)
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var c config
	benchkit.BinFlag(&c.bin)
	flag.IntVar(&c.pods, "pods", 500, "pods created at once for the throughput figure (0: skip)")
	flag.IntVar(&c.restartPods, "restart-pods", 1000, "pods in the cluster for the memory, idle CPU and restart figures (0: skip them)")
	flag.DurationVar(&c.idle, "idle", 60*time.Second, "how long the idle CPU is measured")
	flag.Var(&c.flags, "edgeovn-flag", "an extra flag for edgeovn (repeatable)")
	flag.Var(&c.env, "edgeovn-env", "an extra environment variable for edgeovn, NAME=VALUE (repeatable)")
	flag.BoolVar(&c.keep, "keep", false, "keep the rig's directory (edgeovn's log) and print where it is")
	flag.StringVar(&c.profile, "profile", "", "save edgeovn's CPU profile of each burst and heap profile of each memory reading into this directory (runs edgeovn with --pprof)")
	flag.BoolVar(&c.floor, "floor", false, "instead of edgeovn, run a bare annotator (informer, 64 workers, the same patch; no IPAM, no OVN) for the burst only: the floor any controller that annotates each pod has on this API server")
	flag.Var(&c.compareBins, "compare-bin", "after the restart, run edgeovn from this directory too (another build, e.g. the commit before a change) and read its memory on the same pods (repeatable)")
	flag.BoolVar(&c.bgp, "bgp", false, "after the restart, run this build with a BGP neighbour (one that never answers) and read the memory of edgeovn and its edgeovn-bgp")
	flag.Parse()
	if c.floor {
		c.restartPods = 0
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "ctrlbench:", err)
		os.Exit(1)
	}
}

// bench is one run: the rig, its edgeovn, the bench's own clients and its view of the pods.
type bench struct {
	cfg    config
	rig    *harness.Rig
	cl     *benchkit.Clients
	spec   daemon.Spec
	proc   *harness.Process
	seen   *podWatch
	ports  *portWatch
	prof   *profiler // nil: no profiles
	number int       // pods created so far
}

func run(c config) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{Keep: c.keep})
	if err != nil {
		return err
	}
	defer rig.Stop()
	if c.keep {
		defer fmt.Println("\nrig directory kept:", rig.Dir)
	}
	if c.profile != "" {
		if err := os.MkdirAll(c.profile, 0o755); err != nil {
			return fmt.Errorf("profile directory: %w", err)
		}
		c.flags = append(c.flags, "--pprof")
	}
	b := &bench{cfg: c, rig: rig, spec: daemon.Spec{Node: nodeName, BinDir: c.bin,
		Extra: append([]string{"--log-level=info"}, c.flags...), Env: c.env}, prof: newProfiler(c.profile, rig.DialContext)}
	if err := b.start(ctx); err != nil {
		return err
	}
	defer b.cl.Close()
	fmt.Printf("edgeovn %s, extra flags %q, environment %q; load average at start %s\n", c.bin, c.flags, c.env, benchkit.LoadAvg())
	if c.pods > 0 {
		r, err := b.burst(ctx, "burst", c.pods)
		if err != nil {
			return fmt.Errorf("burst: %w", err)
		}
		r.print()
	}
	if c.restartPods <= 0 {
		return nil
	}
	return b.steadyAndRestart(ctx)
}

// steadyAndRestart fills the namespace up to restartPods, measures memory and idle CPU, then
// restarts edgeovn and measures again.
func (b *bench) steadyAndRestart(ctx context.Context) error {
	if err := b.fill(ctx, b.cfg.restartPods); err != nil {
		return err
	}
	steady, err := b.usage(ctx, "steady", b.cfg.idle)
	if err != nil {
		return err
	}
	rs, err := b.restart(ctx)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	after, err := b.usage(ctx, "restarted", 0)
	if err != nil {
		return err
	}
	printUsage(b.cfg.restartPods, steady, after)
	rs.print(b.cfg.restartPods)
	if len(b.cfg.compareBins) > 0 || b.cfg.bgp {
		return b.variants(ctx, after)
	}
	return nil
}

// start brings up the Node, the namespace, the bench's clients and watches, and edgeovn, and
// waits for its controller role to run.
func (b *bench) start(ctx context.Context) error {
	if err := daemon.Kubelet(b.rig, nodeName).EnsureNode(ctx); err != nil {
		return err
	}
	var err error
	if b.cl, err = benchkit.Connect(ctx, b.rig); err != nil {
		return err
	}
	if err := createNamespace(ctx, b.cl.Kube, namespace); err != nil {
		return err
	}
	if b.seen, err = watchPods(ctx, b.cl.Kube, namespace); err != nil {
		return err
	}
	b.ports = watchPorts(ctx, b.cl.NB)
	if b.cfg.floor {
		return b.runFloor(ctx)
	}
	return b.startDaemon(ctx)
}

// startDaemon starts edgeovn and waits until its controller role runs (a new log line after
// the start: a restarted process appends to the same log).
func (b *bench) startDaemon(ctx context.Context) error {
	before := logSize(filepath.Join(b.rig.Dir, "edgeovn.log"))
	p, err := daemon.Start(ctx, b.rig, b.spec)
	if err != nil {
		return err
	}
	b.proc = p
	return until(ctx, "edgeovn's controller role running", func() bool { return logHasAfter(p.Log, before, "controller role running") })
}
