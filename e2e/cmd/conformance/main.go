package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

type config struct {
	bin       string
	cache     string
	out       string
	modes     string
	focus     string
	specs     string
	skip      string
	dryRun    bool
	report    string
	stackName string
	stack     stack // parsed from stackName
	parallel  bool
	verbose   bool
	keep      bool
	numNodes  int
	timeout   time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.bin, "bin", "bin", "directory holding edgeovn and edgeovn-cni (make build)")
	flag.StringVar(&c.cache, "cache", ".cache/bin", "directory holding e2e.test, kubectl, agnhost and the cluster's binaries (make conformance-deps)")
	flag.StringVar(&c.out, "out", "", "directory for the reports and logs (default: a new one under /tmp)")
	flag.StringVar(&c.stackName, "stack", "single", "the cluster's address families: single (IPv4, k3s's defaults) or dual (k3s's dual-stack ranges; selects the [Feature:IPv6DualStack] specs too)")
	flag.StringVar(&c.modes, "modes", "kube-proxy,edgeovn", "comma-separated runs: kube-proxy (with kube-proxy iptables), edgeovn (without kube-proxy)")
	flag.StringVar(&c.focus, "focus", "", "run the specs matching this regular expression instead (to narrow the run while developing; the table shows only the selected specs)")
	flag.StringVar(&c.specs, "specs", "", "run exactly the specs named in this file, one per line as the table prints them (instead of -focus)")
	flag.StringVar(&c.skip, "skip", "", "skip these specs too (regular expression)")
	flag.StringVar(&c.report, "report", "", "print the table of earlier runs' -out directories (comma-separated, merged in order: a spec's last run wins) instead of running")
	flag.BoolVar(&c.dryRun, "dry-run", false, "list the specs e2e.test would run, without a cluster")
	flag.BoolVar(&c.parallel, "parallel", false, "run the modes' clusters at the same time (each in its own rig), not one after the other")
	flag.BoolVar(&c.verbose, "v", false, "log the cluster's progress")
	flag.BoolVar(&c.keep, "keep", false, "keep each rig's directory (logs) after its run")
	flag.IntVar(&c.numNodes, "num-nodes", 0, "tell e2e.test the cluster has this many nodes (its --num-nodes; default: it counts them): 2 runs the specs that skip on one node only for want of a second (the dual-stack Secondary IP Family checks) on the one node")
	flag.DurationVar(&c.timeout, "timeout", 4*time.Hour, "bound for the whole command")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	// SIGINT or SIGTERM stops e2e.test and tears the cluster down.
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(sigCtx, c.timeout)
	defer cancel()
	var err error
	if c.bin, err = filepath.Abs(c.bin); err != nil {
		return err
	}
	if c.cache, err = filepath.Abs(c.cache); err != nil {
		return err
	}
	if c.out == "" {
		if c.out, err = os.MkdirTemp("", "conformance-"); err != nil {
			return err
		}
	}
	log := slog.New(slog.DiscardHandler)
	if c.verbose {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if c.stack, err = parseStack(c.stackName); err != nil {
		return err
	}
	modes, err := parseModes(c.modes)
	if err != nil {
		return err
	}
	if c.specs != "" {
		if c.focus != "" {
			return fmt.Errorf("-specs and -focus both select specs: give one")
		}
		if c.focus, err = specsFocus(c.specs, c.stack); err != nil {
			return err
		}
	}
	if c.dryRun {
		return dryRun(ctx, c)
	}
	if c.report != "" {
		return reprint(c.report, modes, c.stack)
	}
	if err := preflight(c); err != nil {
		return err
	}
	if err := checkImageNames(ctx, filepath.Join(c.cache, "e2e.test")); err != nil {
		return err
	}
	tars, err := buildImages(ctx, c)
	if err != nil {
		return err
	}
	runs := make([]modeRun, len(modes))
	g, gctx := errgroup.WithContext(ctx)
	if !c.parallel {
		g.SetLimit(1)
	}
	for i, m := range modes {
		g.Go(func() error {
			r, err := runMode(gctx, c, m, tars, log)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			runs[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	printTable(os.Stdout, runs)
	fmt.Printf("\nreports and logs: %s\n", c.out)
	return nil
}
