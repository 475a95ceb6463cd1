package northbound

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// holdFirstGroupCommit makes the first grouped transaction wait until it and the calls queued
// behind it number total, so that the test knows that the rest share the second transaction.
func holdFirstGroupCommit(t *testing.T, f fixture, total int) {
	t.Helper()
	first := true
	beforePortGroupCommit = func(calls int) {
		if !first {
			return
		}
		first = false
		for {
			f.c.group.mu.Lock()
			n := len(f.c.group.pending)
			f.c.group.mu.Unlock()
			if calls+n >= total {
				return
			}
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}
	t.Cleanup(func() { beforePortGroupCommit = nil })
}

// ensureAll runs EnsurePodPort for every spec at once and returns each call's error.
func ensureAll(ctx context.Context, c *Client, specs []PodPortSpec, ctxs map[int]context.Context) []error {
	errs := make([]error, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() {
			cctx := ctx
			if o, ok := ctxs[i]; ok {
				cctx = o
			}
			errs[i] = c.EnsurePodPort(cctx, spec)
		})
	}
	wg.Wait()
	return errs
}

// racePods is racePod(0) to racePod(n-1).
func racePods(n int) []PodPortSpec {
	specs := make([]PodPortSpec, n)
	for i := range specs {
		specs[i] = racePod(i)
	}
	return specs
}

func TestConcurrentEnsurePodPortShareTransactions(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	const n = 32
	specs := racePods(n)
	holdFirstGroupCommit(t, f, n)
	before := f.c.writes.Load()
	for i, err := range ensureAll(f.ctx, f.c, specs, nil) {
		if err != nil {
			t.Errorf("ensure %s: %v", specs[i].Name, err)
		}
	}
	// The first transaction (the first call, or the few that came at once), then all the
	// calls queued behind it in one more.
	if got := f.c.writes.Load() - before; got < 1 || got > 2 {
		t.Errorf("%d concurrent ensures took %d write transactions, want 1 or 2", n, got)
	}
	db := snapshot(t, connectAnother(t, f))
	sw := db.switchNamed(t, "ovn-default")
	for _, spec := range specs {
		lsp := db.onePort(t, spec.Name)
		if got := db.holders[lsp.UUID]; len(got) != 1 || got[0] != sw.UUID {
			t.Errorf("port %s held by switches %v, want only ovn-default", spec.Name, got)
		}
		if len(lsp.Addresses) != 1 || lsp.Addresses[0] != spec.addresses() {
			t.Errorf("port %s addresses %v, want %s", spec.Name, lsp.Addresses, spec.addresses())
		}
	}
	// Ensured again, all at once: nothing to write.
	f.mustWrite(t, 0, "ensure the same ports again", func() error {
		return errors.Join(ensureAll(f.ctx, f.c, specs, nil)...)
	})
}

// A bad call (a switch that does not exist) and a caller that has gone fail only their own
// ports: the others queued in the same transaction are still ensured.
func TestGroupedEnsurePodPortFailsOnlyItsOwn(t *testing.T) {
	f := newFixture(t)
	ensureClusterAndSubnet(t, f)
	const n = 12
	specs := racePods(n)
	const bad, gone = 5, 8
	specs[bad].Switch = "no-such-switch"
	cancelled, cancel := context.WithCancel(f.ctx)
	cancel()
	holdFirstGroupCommit(t, f, n)
	errs := ensureAll(f.ctx, f.c, specs, map[int]context.Context{gone: cancelled})
	for i, err := range errs {
		switch i {
		case bad:
			if !errors.Is(err, ovn.ErrNotFound) {
				t.Errorf("port on a missing switch: err = %v, want ovn.ErrNotFound", err)
			}
		case gone:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("port of a gone caller: err = %v, want context.Canceled", err)
			}
		default:
			if err != nil {
				t.Errorf("ensure %s: %v", specs[i].Name, err)
			}
		}
	}
	db := snapshot(t, connectAnother(t, f))
	for i, spec := range specs {
		_, exists := db.portNamed(spec.Name)
		if want := i != bad && i != gone; exists != want {
			t.Errorf("port %s exists = %v, want %v", spec.Name, exists, want)
		}
	}
}

func (s nbSnapshot) portNamed(name string) (*nbdb.LogicalSwitchPort, bool) {
	for _, p := range s.ports {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}
