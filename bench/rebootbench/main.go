package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

func main() {
	var bin string
	benchkit.BinFlag(&bin)
	pods := flag.String("pods", "10,100", "comma-separated pod counts, each on a fresh rig")
	keep := flag.Bool("keep", false, "keep the rigs' directories (every daemon's log) and print where they are")
	steps := flag.Bool("steps", false, "run the booted edgeovn at --log-level=debug and print where the time went: the boot's timeline, each ADD's steps (p50, p99, max) from its log, and the CPU used during the burst")
	pprofDir := flag.String("pprof", "", "run the booted edgeovn with --pprof and write its CPU profile from the burst and its allocations into this folder")
	kubelet := flag.Bool("kubelet", false, "reboot a real node instead (kubelet and containerd 2 from $EDGEOVN_KUBELET etc., a Deployment of -pods testserver pods; make deps) and print its timeline")
	flag.Parse()
	sizes, err := parseSizes(*pods)
	if err == nil && *kubelet {
		err = runRealNode(bin, sizes, *keep)
	} else if err == nil {
		err = run(bin, sizes, options{keep: *keep, steps: *steps, pprof: *pprofDir})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rebootbench:", err)
		os.Exit(1)
	}
}

func runRealNode(bin string, sizes []int, keep bool) error {
	if err := harness.Preflight(harness.RealNodeParts...); err != nil {
		return err
	}
	printRealHeader()
	for _, n := range sizes {
		r, err := rebootRealNode(context.Background(), bin, n, keep)
		if err != nil {
			return fmt.Errorf("%d pods on a real node: %w", n, err)
		}
		r.print()
	}
	return nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return nil, fmt.Errorf("-pods %q: %q is not a pod count of at least 2", s, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// options are a libcni reboot's flags.
type options struct {
	keep  bool // keep the rig's directory
	steps bool   // debug logging and the breakdown
	pprof string // where the booted edgeovn's profiles go ("": not profiled)
}

func run(bin string, sizes []int, o options) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	fmt.Printf("%6s  %14s  %14s  %15s  %10s  %9s  %16s\n", "pods", "boot->all up", "ovs->all up", "edgeovn->all up", "ADD p99", "ADDs > 1", "unreachable@60s")
	for _, n := range sizes {
		r, err := reboot(context.Background(), bin, n, o)
		if err != nil {
			return fmt.Errorf("%d pods: %w", n, err)
		}
		r.print()
		if o.steps {
			r.timeline.print()
		}
	}
	return nil
}
