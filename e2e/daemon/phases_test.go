package daemon

import (
	"strings"
	"testing"
	"time"
)

func TestParsePhases(t *testing.T) {
	line := `time=2026-11-23T14:00:00.000Z level=INFO msg="startup phases" origin_unix_us=1700000000123456 config_ms=1.5 ovsdb_ms=12.25 ready_ms=40`
	p, err := parsePhases(line)
	if err != nil {
		t.Fatal(err)
	}
	if p.Origin != time.UnixMicro(1700000000123456) {
		t.Errorf("origin %v", p.Origin)
	}
	want := []Phase{{"config", 1500 * time.Microsecond}, {"ovsdb", 12250 * time.Microsecond}, {"ready", 40 * time.Millisecond}}
	if len(p.Marks) != len(want) {
		t.Fatalf("marks %v, want %v", p.Marks, want)
	}
	for i := range want {
		if p.Marks[i] != want[i] {
			t.Errorf("mark %d = %v, want %v", i, p.Marks[i], want[i])
		}
	}
	if at, ok := p.At("ovsdb"); !ok || at != 12250*time.Microsecond {
		t.Errorf("At(ovsdb) = %v, %v", at, ok)
	}
	for _, bad := range []string{`msg="startup phases" ready_ms=4`, `msg="startup phases" origin_unix_us=x`, `msg="startup phases" origin_unix_us=1 ready_ms=soon`} {
		if _, err := parsePhases(bad); err == nil || !strings.Contains(err.Error(), "startup phases") {
			t.Errorf("parsePhases(%q) = %v, want an error naming the record", bad, err)
		}
	}
}
