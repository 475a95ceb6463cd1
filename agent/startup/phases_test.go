package startup

import (
	"log/slog"
	"testing"
	"time"
)

func attrMap(as []slog.Attr) map[string]slog.Value {
	m := map[string]slog.Value{}
	for _, a := range as {
		m[a.Key] = a.Value
	}
	return m
}

// TestPhases: offsets from the origin, in marking order; a repeated mark keeps the first;
// Done closes once and later marks are ignored; nil records nothing.
func TestPhases(t *testing.T) {
	origin := time.Now().Add(-time.Second)
	p := BeginAt(origin)
	p.Mark("ovsdb")
	time.Sleep(2 * time.Millisecond)
	p.Mark("ovsdb")
	p.Mark("datapath")
	if !p.Done("ready") {
		t.Fatal("first Done did not close the record")
	}
	if p.Done("ready") {
		t.Error("second Done closed it again")
	}
	p.Mark("late")
	as := p.Attrs()
	var names []string
	for _, a := range as {
		names = append(names, a.Key)
	}
	if got := len(names); got != 4 || names[0] != "origin_unix_us" || names[1] != "ovsdb_ms" || names[2] != "datapath_ms" || names[3] != "ready_ms" {
		t.Fatalf("attrs %v, want origin_unix_us ovsdb_ms datapath_ms ready_ms", names)
	}
	m := attrMap(as)
	if m["origin_unix_us"].Int64() != origin.UnixMicro() {
		t.Errorf("origin %v, want %v", m["origin_unix_us"], origin.UnixMicro())
	}
	ovsdb, dp := m["ovsdb_ms"].Float64(), m["datapath_ms"].Float64()
	if ovsdb < 1000 || dp < ovsdb+2 {
		t.Errorf("ovsdb %v ms, datapath %v ms: want offsets from the origin a second ago, the repeated mark not moving ovsdb", ovsdb, dp)
	}

	var none *Phases
	none.Mark("x")
	if none.Done("ready") || none.Attrs() != nil {
		t.Error("a nil record recorded something")
	}
}
