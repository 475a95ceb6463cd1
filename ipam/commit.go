package ipam

import (
	"context"
	"fmt"
)

// ticket is one caller's changes on their way to the store.
type ticket struct {
	changes []Change
	done    chan struct{}
	err     error
}

// enqueue queues changes already applied in memory. The caller holds m.mu, so the queue
// order is the order in which the changes were applied.
func (m *IPAM) enqueue(changes []Change) *ticket {
	t := &ticket{changes: changes, done: make(chan struct{})}
	m.queue = append(m.queue, t)
	return t
}

// tail returns the last queued ticket, or nil: a caller whose request changes nothing waits
// for it so that what it observed is durable before it returns. The caller holds m.mu.
func (m *IPAM) tail() *ticket {
	if len(m.queue) == 0 {
		return nil
	}
	return m.queue[len(m.queue)-1]
}

// wait returns once t is durable or failed. A caller that finds no commit in flight becomes
// the committer: it takes every queued ticket and writes them in one store transaction
// (group commit); callers arriving meanwhile queue up, and when that commit ends one of them
// writes them all at once. Callers whose tickets are done return as soon as their channel
// closes, without queueing on a lock behind each other, so the next commit starts at once.
//
// The write is not cancelled with ctx: a half-written batch would only be rolled back, and
// other callers' changes ride in it.
func (m *IPAM) wait(ctx context.Context, t *ticket) error {
	if t == nil {
		return nil
	}
	m.mu.Lock()
	for m.committing {
		turn := m.turn
		m.mu.Unlock()
		select {
		case <-t.done:
			return t.err
		case <-turn:
		}
		m.mu.Lock()
	}
	select {
	case <-t.done: // written by the commit that just ended
		m.mu.Unlock()
		return t.err
	default:
	}
	m.committing, m.turn = true, make(chan struct{})
	batch := m.queue
	m.queue = nil
	m.mu.Unlock()
	m.commit(ctx, batch)
	m.mu.Lock()
	m.committing = false
	close(m.turn)
	m.mu.Unlock()
	return t.err
}

// commit writes batch in one store transaction and settles its tickets.
func (m *IPAM) commit(ctx context.Context, batch []*ticket) {
	n := 0
	for _, b := range batch {
		n += len(b.changes)
	}
	changes := make([]Change, 0, n)
	for _, b := range batch {
		changes = append(changes, b.changes...)
	}
	err := m.store.Commit(context.WithoutCancel(ctx), changes)
	if err != nil {
		err = fmt.Errorf("commit %d ipam changes: %w", len(changes), err)
		m.recover(ctx, err)
	}
	for _, b := range batch {
		b.err = err
		close(b.done)
	}
}

// recover drops from memory every change that is not durable, by reloading the store, and
// fails the tickets queued meanwhile, since they were computed on top of the failed batch.
func (m *IPAM) recover(ctx context.Context, cause error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.queue {
		b.err = fmt.Errorf("an earlier change failed: %w", cause)
		close(b.done)
	}
	m.queue = nil
	st, err := m.store.Load(context.WithoutCancel(ctx))
	if err != nil {
		m.broken = fmt.Errorf("reload ipam state after failed commit: %w", err)
		m.log.Error("ipam unusable until restart", "err", m.broken)
		return
	}
	m.reset(st)
	m.log.Warn("ipam reloaded after failed commit", "err", cause)
}
