package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeBatches: batches of one mode merge into one result per spec; a spec that ran
// replaces a "not run" skip whatever the order, a later run replaces an earlier one, and a
// skip never replaces a run, and a skip keeps its reason against a later batch that did not
// select the spec (T: the framework skipped it for want of nodes in the first batch only).
func TestMergeBatches(t *testing.T) {
	notRun := func(n string) result { return result{Name: n, Outcome: notRun, Reason: "outside -focus"} }
	first := []result{{Name: "A", Outcome: "fail", Reason: "timed out", Seconds: 10}, notRun("B"), notRun("C"), {Name: "S", Outcome: "skip", Reason: "SCTP"}, {Name: "T", Outcome: "skip", Reason: "two nodes"}}
	second := []result{notRun("A"), {Name: "B", Outcome: "pass", Seconds: 5}, notRun("C"), {Name: "S", Outcome: "skip", Reason: "SCTP"}}
	rerun := []result{{Name: "A", Outcome: "pass", Seconds: 7}, notRun("B"), notRun("C"), {Name: "S", Outcome: "skip", Reason: "SCTP"}, notRun("T")}
	got := mergeResults(first, second, rerun)
	want := []result{{Name: "A", Outcome: "pass", Seconds: 7}, {Name: "B", Outcome: "pass", Seconds: 5}, notRun("C"), {Name: "S", Outcome: "skip", Reason: "SCTP"}, {Name: "T", Outcome: "skip", Reason: "two nodes"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("spec %s: got %+v, want %+v", want[i].Name, got[i], want[i])
		}
	}
	if s := specTime(got).Seconds(); s != 12 {
		t.Errorf("spec time %vs, want 12s (the merged specs' own)", s)
	}
}

// TestReadRunsAcrossDirs: each directory holds the modes it ran; a mode that no directory
// ran, or a directory with no report of the asked modes, is an error naming it.
func TestReadRunsAcrossDirs(t *testing.T) {
	batch := func(mode, report string) string {
		d := t.TempDir()
		if err := os.MkdirAll(filepath.Join(d, mode), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, mode, "junit_01.xml"), []byte(report), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	one := batch("edgeovn", sampleReport)
	two := batch("kube-proxy", sampleReport)
	runs, err := readRuns([]string{one, two}, []kubeMode{allModes["kube-proxy"], allModes["edgeovn"]}, singleStack)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || len(runs[0].results) != 5 || len(runs[1].results) != 5 {
		t.Fatalf("got %d runs %+v, want both modes with the report's 5 selected specs", len(runs), runs)
	}
	if _, err := readRuns([]string{one}, []kubeMode{allModes["kube-proxy"], allModes["edgeovn"]}, singleStack); err == nil || !strings.Contains(err.Error(), "kube-proxy") {
		t.Errorf("a mode no directory ran: %v, want an error naming kube-proxy", err)
	}
	empty := t.TempDir()
	if _, err := readRuns([]string{one, empty}, []kubeMode{allModes["edgeovn"]}, singleStack); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("a directory without reports: %v, want an error naming it", err)
	}
}
