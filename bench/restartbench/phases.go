package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// startPhases are the phases of edgeovn's start on the way to READY=1, in the order they
// run: "main" is the process started to its main function (the harness's `ip netns exec`
// and shell, the Go runtime, package initialisation); the others are edgeovn's own marks.
var startPhases = []string{"main", "config", "ovsdb", "datapath", "serving", "installed", "ready"}

// concurrentPhases run beside the start (they are not on READY's path) and are shown when
// they ended before READY=1.
var concurrentPhases = []string{"kube_client"}

// printPhases prints, per phase, when it ended (since the process was started) and the time
// it took itself (since the previous phase ended), p50 and max over the restarts.
func printPhases(rs []daemon.Restart) {
	ends := map[string][]time.Duration{}
	own := map[string][]time.Duration{}
	missing := 0
	for _, r := range rs {
		if r.Phases.Origin.IsZero() {
			missing++
			continue
		}
		prev := time.Duration(0)
		for _, name := range append(startPhases, concurrentPhases...) {
			end, ok := r.ToMain, true
			if name != "main" {
				at, found := r.Phases.At(name)
				end, ok = r.ToMain+at, found
			}
			if !ok {
				continue
			}
			ends[name] = append(ends[name], end)
			if isStartPhase(name) {
				own[name] = append(own[name], end-prev)
				prev = end
			}
		}
	}
	if missing == len(rs) {
		fmt.Printf("\nno start phases: edgeovn logged no \"startup phases\" record (a binary older than it)\n")
		return
	}
	fmt.Printf("\nstart phases over %d restarts (from the process started; \"own\" since the previous phase ended)\n\n", len(rs)-missing)
	fmt.Println("| phase | ends at, p50 / max | own, p50 / max |")
	fmt.Println("|---|---|---|")
	for _, name := range append(startPhases, concurrentPhases...) {
		if len(ends[name]) == 0 {
			continue
		}
		ownCol := "(concurrent)"
		if isStartPhase(name) {
			ownCol = fmt.Sprintf("%s / %s", ms(pct(own[name], 50)), ms(pct(own[name], 100)))
		}
		fmt.Printf("| %s | %s / %s | %s |\n", name, ms(pct(ends[name], 50)), ms(pct(ends[name], 100)), ownCol)
	}
}

func isStartPhase(name string) bool {
	for _, p := range startPhases {
		if p == name {
			return true
		}
	}
	return false
}

// spawnCosts splits the "main" phase in the same run: the harness's own way of starting a
// process in the rig (`ip netns exec` and a shell that execs, what systemd does not do), and
// the edgeovn binary's exec, Go runtime and package initialisation up to main (`edgeovn
// version`, which prints and exits at once), each timed from the start to the exit, n times.
func spawnCosts(ctx context.Context, rig *harness.Rig, bin string, n int) (shell, binary []time.Duration, err error) {
	for range n {
		d, err := timeRun(ctx, "ip", "netns", "exec", rig.Netns, "/bin/sh", "-c", "exec /bin/true")
		if err != nil {
			return nil, nil, err
		}
		shell = append(shell, d)
		if d, err = timeRun(ctx, filepath.Join(bin, "edgeovn"), "version"); err != nil {
			return nil, nil, err
		}
		binary = append(binary, d)
	}
	return shell, binary, nil
}

func timeRun(ctx context.Context, name string, args ...string) (time.Duration, error) {
	t0 := time.Now()
	if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("run %s: %w: %s", name, err, out)
	}
	return time.Since(t0), nil
}

func printSpawnCosts(shell, binary []time.Duration) {
	fmt.Printf("\n\"main\" split, %d runs each in the same rig: `ip netns exec` + sh exec /bin/true %s p50 / %s max (the harness's, not under systemd); "+
		"`edgeovn version` start to exit %s p50 / %s max (exec, Go runtime and package init)\n",
		len(shell), ms(pct(shell, 50)), ms(pct(shell, 100)), ms(pct(binary, 50)), ms(pct(binary, 100)))
}
