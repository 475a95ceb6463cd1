package main

import (
	"fmt"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
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
	for _, r := range rs {
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
	fmt.Printf("\nstart phases over %d restarts (from the process started; \"own\" since the previous phase ended)\n\n", len(rs))
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
