package ctltest

import (
	"slices"
	"strings"
	"testing"
)

// Diff reports the lines of want missing from got and those of got not in want, one a line;
// "" when the two hold the same lines.
func Diff(got, want []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("\n  missing: " + w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("\n  unexpected: " + g)
		}
	}
	return b.String()
}

// WithPrefix keeps the lines that start with one of prefixes.
func WithPrefix(lines []string, prefixes ...string) []string {
	var out []string
	for _, l := range lines {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// CheckHas fails the test for each of want's northbound rows that is not there.
func (nb *NB) CheckHas(t testing.TB, want []string) {
	t.Helper()
	rows := nb.Rows(t)
	for _, w := range want {
		if !slices.Contains(rows, w) {
			t.Errorf("northbound lacks %q: %q", w, rows)
		}
	}
}

// Check fails the test unless the Events recorded are as many as want and each contains its
// entry of want.
func (r *Recorder) Check(t testing.TB, want []string) {
	t.Helper()
	got := r.Events()
	if len(got) != len(want) {
		t.Errorf("events %q, want %d matching %q", got, len(want), want)
		return
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("event %d %q, want it to contain %q", i, got[i], w)
		}
	}
}
