package node

import (
	"context"
	"testing"
	"time"
)

// TestAfterStart: what needs the API waits for the node role's start, no longer than the
// grace, and not at all once the start is done; a context that ends says so.
func TestAfterStart(t *testing.T) {
	old := APIStartGrace
	t.Cleanup(func() { APIStartGrace = old })
	APIStartGrace = time.Hour
	started := make(chan struct{})
	done := make(chan bool, 1)
	go func() { done <- AfterStart(context.Background(), started) }()
	select {
	case <-done:
		t.Fatal("returned before the node role's start")
	case <-time.After(50 * time.Millisecond):
	}
	close(started)
	if ok := <-done; !ok {
		t.Fatal("started: AfterStart = false")
	}

	APIStartGrace = 20 * time.Millisecond
	if !AfterStart(context.Background(), make(chan struct{})) {
		t.Fatal("grace passed: AfterStart = false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	APIStartGrace = time.Hour
	if AfterStart(ctx, make(chan struct{})) {
		t.Fatal("ended context: AfterStart = true")
	}
}
