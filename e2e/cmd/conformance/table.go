package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// printTable prints one row per selected spec with its outcome in each run, and the reason
// of every skip and the start of every failure, then each run's totals and times.
func printTable(w io.Writer, runs []modeRun) {
	names := map[string]bool{}
	byRun := make([]map[string]result, len(runs))
	for i, r := range runs {
		byRun[i] = map[string]result{}
		for _, res := range r.results {
			byRun[i][res.Name] = res
			names[res.Name] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	head := "| test |"
	rule := "|---|"
	for _, r := range runs {
		head += " " + r.mode.title + " |"
		rule += "---|"
	}
	fmt.Fprintln(w, head+" reason (skip) or failure |")
	fmt.Fprintln(w, rule+"---|")
	for _, n := range sorted {
		row := "| " + escape(strings.TrimPrefix(n, "[sig-network] ")) + " |"
		var notes []string
		for i := range runs {
			res, ok := byRun[i][n]
			if !ok {
				row += " - |"
				continue
			}
			row += " " + res.Outcome + " |"
			if res.Reason != "" && !slices.Contains(notes, res.Reason) {
				notes = append(notes, res.Reason)
			}
		}
		fmt.Fprintln(w, row+" "+escape(strings.Join(notes, "; "))+" |")
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		n := map[string]int{}
		for _, res := range r.results {
			n[res.Outcome]++
		}
		times := fmt.Sprintf("specs %s", r.specs.Round(time.Second))
		if r.setup > 0 { // a reprint knows the specs' times from the reports, not the cluster's
			times = fmt.Sprintf("cluster up in %s, %s", r.setup.Round(time.Second), times)
		}
		fmt.Fprintf(w, "%s: %d pass, %d fail, %d skip, %d not run; %s\n", r.mode.title, n["pass"], n["fail"], n["skip"], n[notRun], times)
	}
}

// escape keeps a cell in its column of a Markdown table.
func escape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
