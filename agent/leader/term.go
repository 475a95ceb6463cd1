package leader

import (
	"context"
	"sync"
)

// termGate keeps terms of leadership from overlapping in one process: a new campaign must not
// win while the previous term's controller still holds its database, informers and northbound
// client. edgeovn's elector (lease.go) already returns only after its term has; the gate makes
// that a rule of the campaign loop rather than of the elector (it was written for client-go's,
// which did not wait). Every term passes through begin and end; the campaign loop calls wait
// before it campaigns again.
type termGate struct {
	mu      sync.Mutex
	running bool
	done    chan struct{}
}

// begin marks a term as running, unless its context already ended: a term started late,
// after its campaign returned, never runs. It is atomic with the check,
// so wait either sees the term or the term never starts.
func (g *termGate) begin(ctx context.Context) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	g.running, g.done = true, make(chan struct{})
	return true
}

// end marks the running term as fully stopped.
func (g *termGate) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running = false
	close(g.done)
}

// wait returns once no term runs. The campaign that started the term must have ended
// (its context cancelled), or a term could begin after wait returns.
func (g *termGate) wait() {
	g.mu.Lock()
	running, done := g.running, g.done
	g.mu.Unlock()
	if running {
		<-done
	}
}
