package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// reprint prints one table from the reports of earlier runs: each -report directory is an
// -out directory holding a subdirectory per mode it ran. Runs made in batches (-focus on a
// few specs each) come out as one table: see mergeResults.
func reprint(dirs string, modes []kubeMode, s stack) error {
	runs, err := readRuns(strings.Split(dirs, ","), modes, s)
	if err != nil {
		return err
	}
	printTable(os.Stdout, runs)
	return nil
}

// readRuns reads each mode's reports from the directories, in order. A directory without a
// mode's report is a batch that did not run that mode; a mode no directory ran is an error,
// as is a directory that holds no report at all.
func readRuns(dirs []string, modes []kubeMode, s stack) ([]modeRun, error) {
	perMode := make([][][]result, len(modes))
	for _, d := range dirs {
		found := false
		for i, m := range modes {
			dir := filepath.Join(d, m.name)
			if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			res, err := readReport(dir, s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", m.name, err)
			}
			found = true
			perMode[i] = append(perMode[i], res)
		}
		if !found {
			return nil, fmt.Errorf("-report %s: no report of mode %s in it", d, modeNames(modes))
		}
	}
	var runs []modeRun
	for i, m := range modes {
		if len(perMode[i]) == 0 {
			return nil, fmt.Errorf("-report: no directory holds a report of mode %s (pass -modes to print the others)", m.name)
		}
		merged := mergeResults(perMode[i]...)
		runs = append(runs, modeRun{mode: m, results: merged, specs: specTime(merged)})
	}
	return runs, nil
}

func modeNames(modes []kubeMode) string {
	var n []string
	for _, m := range modes {
		n = append(n, m.name)
	}
	return strings.Join(n, " or ")
}

// mergeResults makes one result per spec out of several runs of one mode, taken in order: a
// spec that ran (pass or fail) in a later run replaces what an earlier run said of it (a
// spec re-run after a fix shows its last outcome), and a spec a run did not select never
// replaces one that ran.
func mergeResults(runs ...[]result) []result {
	byName := map[string]result{}
	for _, run := range runs {
		for _, r := range run {
			prev, seen := byName[r.Name]
			if !seen || weight(r) >= weight(prev) {
				byName[r.Name] = r
			}
		}
	}
	out := make([]result, 0, len(byName))
	for _, r := range byName {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func ran(r result) bool { return r.Outcome == "pass" || r.Outcome == "fail" }

// weight orders what a later batch may overwrite: a spec that ran beats a skip, which keeps
// its reason against a batch that did not select it.
func weight(r result) int {
	switch {
	case ran(r):
		return 2
	case r.Outcome == "skip":
		return 1
	}
	return 0
}

// specTime is the specs' own time, as the JUnit reports give it (without cluster set-up).
func specTime(results []result) time.Duration {
	var s float64
	for _, r := range results {
		s += r.Seconds
	}
	return time.Duration(s * float64(time.Second))
}
