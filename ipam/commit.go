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

// wait returns once t is durable or failed. Whoever gets commitMu first writes every queued
// ticket in one store transaction (group commit): while one batch is being synced, the
// callers arriving meanwhile queue up and the next of them writes them all at once.
//
// The write is not cancelled with ctx: a half-written batch would only be rolled back, and
// other callers' changes ride in it.
func (m *IPAM) wait(ctx context.Context, t *ticket) error {
	if t == nil {
		return nil
	}
	m.commitMu.Lock()
	defer m.commitMu.Unlock()
	select {
	case <-t.done:
		return t.err
	default:
	}
	m.mu.Lock()
	batch := m.queue
	m.queue = nil
	m.mu.Unlock()
	var changes []Change
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
	return t.err
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
