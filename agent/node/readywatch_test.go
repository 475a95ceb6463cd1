package node

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// fakeMonitor records Triggers and answers Ready as the test sets it.
type fakeMonitor struct {
	ready    atomic.Bool
	triggers atomic.Int32
}

func (f *fakeMonitor) Trigger()    { f.triggers.Add(1) }
func (f *fakeMonitor) Ready() bool { return f.ready.Load() }

// TestWatchReadinessTriggersWhileNotReady: an Open_vSwitch change re-evaluates readiness while
// the node is not ready (ovs-vswitchd made br-int's device, ovn-controller bound ovn0) and not
// once it is (the pods' own port changes must not cost an evaluation each).
func TestWatchReadinessTriggersWhileNotReady(t *testing.T) {
	r := &Role{log: slog.New(slog.DiscardHandler)}
	m := &fakeMonitor{}
	changes := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.watchReadiness(ctx, m, changes); close(done) }()
	changes <- struct{}{}
	changes <- struct{}{} // the second send returns once the first token was handled
	if n := m.triggers.Load(); n < 1 {
		t.Fatalf("%d triggers for changes while not ready, want at least 1", n)
	}
	m.ready.Store(true)
	changes <- struct{}{} // received only once the token before it is handled
	before := m.triggers.Load()
	changes <- struct{}{}
	changes <- struct{}{}
	if n := m.triggers.Load() - before; n != 0 {
		t.Fatalf("%d triggers for database changes while ready, want none", n)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watchReadiness did not return when its context ended")
	}
}
