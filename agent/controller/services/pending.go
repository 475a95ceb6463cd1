package services

import (
	"sync"
	"time"
)

// pendingSince remembers, per key, when the oldest event not yet synced arrived: the time
// from an event to the rows it caused is what the README's figures report.
type pendingSince struct {
	mu    sync.Mutex
	since map[string]time.Time
}

func (p *pendingSince) mark(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since == nil {
		p.since = map[string]time.Time{}
	}
	if _, ok := p.since[key]; !ok {
		p.since[key] = time.Now()
	}
}

// done forgets the key and returns how long ago its oldest pending event arrived.
func (p *pendingSince) done(key string) (time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.since[key]
	delete(p.since, key)
	return time.Since(t), ok
}
