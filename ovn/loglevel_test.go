package ovn

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"
)

// TestReconnectFailuresAreWarnings drives the adapter the way libovsdb does (logr V(n).Error)
// and checks that only the expected reconnect failures lose their ERROR level.
func TestReconnectFailuresAreWarnings(t *testing.T) {
	tests := []struct {
		msg, wantLevel string
	}{
		{"failed to reconnect", "level=WARN"},
		{"reconnect has failed 5 times, suppressing logging for future attempts", "level=WARN"},
		{"triggering reconnect to rebuild cache", "level=ERROR"},
		{"error updating cache", "level=ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			var buf bytes.Buffer
			h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})
			l := logr.FromSlogHandler(minLevel{Handler: h, min: slog.LevelInfo}).WithValues("db", "x")
			l.V(2).Error(errors.New("connection refused"), tt.msg)
			if out := buf.String(); !strings.Contains(out, tt.wantLevel) || !strings.Contains(out, "connection refused") {
				t.Fatalf("logged %q, want %s with the error", out, tt.wantLevel)
			}
		})
	}
}

// TestDowngradedRecordHonoursLevel checks that a WARN record is dropped by a handler that
// only wants errors, even though it arrived as ERROR.
func TestDowngradedRecordHonoursLevel(t *testing.T) {
	var buf bytes.Buffer
	h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError})
	l := logr.FromSlogHandler(minLevel{Handler: h, min: slog.LevelInfo})
	l.Error(errors.New("refused"), "failed to reconnect")
	if buf.Len() != 0 {
		t.Fatalf("logged %q to an error-only handler", buf.String())
	}
	l.Error(errors.New("refused"), "something else")
	if !strings.Contains(buf.String(), "level=ERROR") {
		t.Fatalf("real error not logged: %q", buf.String())
	}
}
