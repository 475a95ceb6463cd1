package controller

import (
	"log/slog"
	"time"
)

// termPhases records when each step of a term's start ended, since the term began: the
// "controller role running" log line carries them (ipam_ms=..., caches_ms=...), which is
// where a restart's time to the first new allocation goes.
type termPhases struct {
	start time.Time
	attrs []any
}

func newTermPhases() *termPhases { return &termPhases{start: time.Now()} }

// mark notes that the phase name ended now.
func (p *termPhases) mark(name string) {
	ms := float64(time.Since(p.start).Microseconds()) / 1000
	p.attrs = append(p.attrs, slog.Float64(name+"_ms", ms))
}
