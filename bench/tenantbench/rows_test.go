package main

import (
	"maps"
	"slices"
	"testing"
)

// TestRowCountsMinus: only the tables whose count changed, a table gone counted as removed;
// the total and the sorted table list of both layouts.
func TestRowCountsMinus(t *testing.T) {
	before := rowCounts{"ACL": 4, "Logical_Switch": 2, "Meter": 1, "NB_Global": 1}
	after := rowCounts{"ACL": 4, "Logical_Switch": 7, "Logical_Switch_Port": 100, "NB_Global": 1}
	d := after.minus(before)
	want := rowCounts{"Logical_Switch": 5, "Logical_Switch_Port": 100, "Meter": -1}
	if !maps.Equal(d, want) {
		t.Fatalf("minus = %v, want %v", d, want)
	}
	if d.total() != 104 {
		t.Fatalf("total = %d, want 104", d.total())
	}
	if got := tablesOf(d, rowCounts{"ACL": 1}); !slices.Equal(got, []string{"ACL", "Logical_Switch", "Logical_Switch_Port", "Meter"}) {
		t.Fatalf("tablesOf = %v", got)
	}
}
