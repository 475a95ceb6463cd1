package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

func main() {
	var bin string
	benchkit.BinFlag(&bin)
	restarts := flag.Int("restarts", 10, "restarts, alternately SIGTERM and SIGKILL")
	drift := flag.Int("drift", 0, "instead of restarts: break the host wiring this many times each way and time the repairs")
	keep := flag.Bool("keep", false, "keep the rig's directory (edgeovn's logs, one per start) and print where it is")
	flag.Parse()
	if err := run(bin, *restarts, *drift, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "restartbench:", err)
		os.Exit(1)
	}
}

// node is the rig with a supervised edgeovn and a node whose host wiring is done.
type node struct {
	rig *harness.Rig
	sd  *daemon.Systemd
	k   *podsim.Kubelet
	bin string
}

func run(bin string, restarts, drift int, keep bool) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{Keep: keep})
	if err != nil {
		return err
	}
	defer rig.Stop()
	if keep {
		defer fmt.Println("\nrig directory kept:", rig.Dir)
	}
	n, err := start(ctx, rig, bin)
	if err != nil {
		return err
	}
	defer n.sd.Close()
	if drift > 0 {
		return benchDrift(ctx, n, drift)
	}
	return benchRestarts(ctx, n, restarts)
}

func start(ctx context.Context, rig *harness.Rig, bin string) (*node, error) {
	k := daemon.Kubelet(rig, "bench-1")
	sd, err := daemon.NewSystemd(rig, daemon.Spec{Node: k.Node, BinDir: bin, Extra: []string{"--log-level=info",
		"--lease-duration=4s", "--lease-renew-deadline=3s", "--lease-retry-period=500ms"}})
	if err != nil {
		return nil, err
	}
	n := &node{rig: rig, sd: sd, k: k, bin: bin}
	if _, err := sd.Start(ctx, "edgeovn"); err != nil {
		return nil, err
	}
	if _, err := sd.WaitReady(ctx, 0); err != nil {
		return nil, err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return nil, err
	}
	if err := k.WaitReady(ctx); err != nil {
		return nil, err
	}
	for !daemon.HostInterfaceBound(ctx, rig) {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for ovn0 to be bound: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return n, nil
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[min(len(d)-1, (len(d)*p)/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
