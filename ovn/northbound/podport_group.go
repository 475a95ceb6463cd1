package northbound

import (
	"context"
	"errors"
	"sync"
)

// portGroup gathers concurrent EnsurePodPort calls into one transaction (group commit): while
// one transaction of pod ports is in flight, the calls that arrive queue, and the next
// transaction carries all of them. A burst of new pods then costs a few transactions instead
// of one each, and every transaction that adds a port makes the server rewrite the switch's
// whole ports set and send it to every monitoring client (ovn-northd, each edgeovn): with a
// thousand ports that is tens of kilobytes per transaction, decoded by each of them.
//
// Each call still gets its own result: a transaction of several ports that fails (one
// invalid or conflicting port, the caller whose context carried it gone) is not a result for
// anyone; each of its calls then commits its port alone, under its own context.
type portGroup struct {
	mu      sync.Mutex
	busy    bool // a transaction of pod ports is being built or is in flight
	pending []*portCall
}

// portCall is one EnsurePodPort waiting for its port's transaction.
type portCall struct {
	ctx  context.Context
	spec PodPortSpec
	done chan error // buffered: the committer never waits on a caller
}

// errAlone tells a call that the transaction it was part of failed: it must commit alone.
var errAlone = errors.New("pod port transaction failed: commit alone")

// beforePortGroupCommit, when set (tests), runs before each grouped transaction is built,
// with the number of calls in it.
var beforePortGroupCommit func(calls int)

// ensureGrouped queues the call and, if no transaction is under way, commits the queue itself;
// further batches that queued meanwhile are committed by a goroutine, so no caller waits for
// more than its own transaction.
func (c *Client) ensureGrouped(ctx context.Context, spec PodPortSpec) error {
	call := &portCall{ctx: ctx, spec: spec, done: make(chan error, 1)}
	g := &c.group
	g.mu.Lock()
	g.pending = append(g.pending, call)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	if lead {
		c.commitBatch(g.take())
		if g.more() {
			go c.drainGroup()
		}
	}
	select {
	case err := <-call.done:
		if errors.Is(err, errAlone) {
			return c.ensureAlone(ctx, spec)
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drainGroup commits batches until the queue is empty.
func (c *Client) drainGroup() {
	for {
		c.commitBatch(c.group.take())
		if !c.group.more() {
			return
		}
	}
}

// take removes the next batch from the queue: each port once (a second call for a port
// already in the batch waits for the next one).
func (g *portGroup) take() []*portCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	names := make(map[string]bool, len(g.pending))
	var batch, rest []*portCall
	for _, call := range g.pending {
		if names[call.spec.Name] {
			rest = append(rest, call)
			continue
		}
		names[call.spec.Name] = true
		batch = append(batch, call)
	}
	g.pending = rest
	return batch
}

// more reports whether calls are queued; when none are, the group is idle again.
func (g *portGroup) more() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy = len(g.pending) > 0
	return g.busy
}

// commitBatch commits the batch's ports in one transaction under its first call's context
// and answers every call. A lone call gets its own error; the calls of a failed batch are
// told to commit alone.
func (c *Client) commitBatch(batch []*portCall) {
	if beforePortGroupCommit != nil {
		beforePortGroupCommit(len(batch))
	}
	batch = live(batch)
	if len(batch) == 0 {
		return
	}
	if len(batch) == 1 {
		batch[0].done <- c.ensureAlone(batch[0].ctx, batch[0].spec)
		return
	}
	specs := make([]PodPortSpec, len(batch))
	for i, call := range batch {
		specs[i] = call.spec
	}
	ops, err := c.podPortsOps(batch[0].ctx, specs)
	if err == nil {
		err = c.commit(batch[0].ctx, ops)
	}
	if err != nil {
		c.log.Debug("grouped pod port transaction failed, committing each port alone", "ports", len(batch), "err", err)
		err = errAlone
	}
	for _, call := range batch {
		call.done <- err
	}
}

// live answers the calls whose callers have gone (their contexts ended) and returns the rest:
// a gone caller's context must not fail the others' transaction.
func live(batch []*portCall) []*portCall {
	out := batch[:0]
	for _, call := range batch {
		if err := call.ctx.Err(); err != nil {
			call.done <- err
			continue
		}
		out = append(out, call)
	}
	return out
}
