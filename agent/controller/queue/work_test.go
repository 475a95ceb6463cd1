package queue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunEndsWithContext: Run syncs what is queued and returns once its context ends (the
// queue shut down then), which is how a feature's Run ends with its term.
func TestRunEndsWithContext(t *testing.T) {
	q := New("test")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan string, 1)
	var calls atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, q, Worker{Kind: "test", Log: slog.New(slog.DiscardHandler), Sync: func(_ context.Context, key string) error {
			calls.Add(1)
			synced <- key
			return nil
		}})
	}()
	q.Add("a")
	select {
	case key := <-synced:
		if key != "a" {
			t.Fatalf("synced %q, want a", key)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued key was not synced")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if !q.ShuttingDown() {
		t.Error("the queue is not shut down after Run")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d syncs, want 1", n)
	}
}
