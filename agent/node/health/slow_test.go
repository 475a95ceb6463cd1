package health

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestSlowCheckTolerated: a check that passed and then runs into its timeout (a daemon busy
// with a burst of ports) keeps the verdict ready for SlowGrace, then not; one that fails at
// once (a refused socket: the daemon is gone) is not ready at once; one that never passed is
// not ready even when it only times out.
func TestSlowCheckTolerated(t *testing.T) {
	var mode atomic.Int32 // 0 pass, 1 hang until the timeout, 2 refuse
	check := func(ctx context.Context) error {
		switch mode.Load() {
		case 1:
			<-ctx.Done()
			return ctx.Err()
		case 2:
			return errors.New("connection refused")
		}
		return nil
	}
	c := &clock{now: time.Unix(1000, 0)}
	m := NewMonitor(MonitorRequest{Interval: time.Hour, CheckTimeout: 20 * time.Millisecond, SlowGrace: 5 * time.Second, Now: c.Now})
	if err := m.Attach([]Check{{Name: "ovs-vswitchd", Run: check}}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mode.Store(1)
	if err := m.Check(ctx); err == nil {
		t.Fatal("a check that never passed and times out: ready, want not ready")
	}
	mode.Store(0)
	if err := m.Check(ctx); err != nil {
		t.Fatalf("passing check: %v", err)
	}
	mode.Store(1)
	c.add(4 * time.Second)
	if err := m.Check(ctx); err != nil {
		t.Fatalf("timed out 4 s after it passed (grace 5 s): %v, want ready", err)
	}
	c.add(2 * time.Second)
	if err := m.Check(ctx); err == nil {
		t.Fatal("timed out 6 s after it passed (grace 5 s): ready, want not ready")
	}
	mode.Store(0)
	if err := m.Check(ctx); err != nil {
		t.Fatalf("passing again: %v", err)
	}
	mode.Store(2)
	if err := m.Check(ctx); err == nil {
		t.Fatal("refused right after passing: ready, want not ready at once")
	}
}
