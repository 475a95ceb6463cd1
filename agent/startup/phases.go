package startup

import (
	"log/slog"
	"sync"
	"time"
)

// Phases is the record of one start.
type Phases struct {
	origin time.Time

	mu    sync.Mutex
	marks []mark
	done  bool
}

type mark struct {
	name string
	at   time.Duration // since origin
}

// Begin starts a record whose origin is now.
func Begin() *Phases { return BeginAt(time.Now()) }

// BeginAt starts a record whose origin is t (its monotonic reading is what offsets use).
func BeginAt(t time.Time) *Phases { return &Phases{origin: t} }

// Mark records that phase name has ended now. The first mark of a name wins.
func (p *Phases) Mark(name string) {
	if p == nil {
		return
	}
	at := time.Since(p.origin)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	for _, m := range p.marks {
		if m.name == name {
			return
		}
	}
	p.marks = append(p.marks, mark{name: name, at: at})
}

// Done closes the record with phase name and reports whether this call closed it (the
// first call does; later ones, and calls on nil, return false).
func (p *Phases) Done(name string) bool {
	if p == nil {
		return false
	}
	p.Mark(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return false
	}
	p.done = true
	return true
}

// Attrs are the record as log attributes: origin_unix_us, the origin's wall-clock time in
// microseconds (so that a supervisor can add the time from its exec to main), then each
// phase's end as milliseconds since the origin, in the order they were marked.
func (p *Phases) Attrs() []slog.Attr {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	attrs := []slog.Attr{slog.Int64("origin_unix_us", p.origin.UnixMicro())}
	for _, m := range p.marks {
		attrs = append(attrs, slog.Float64(m.name+"_ms", float64(m.at.Microseconds())/1000))
	}
	return attrs
}
