package health

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestNotReadyRetriesSoon: while the verdict is not ready the Monitor evaluates every
// RetryInterval, so a datapath that comes up without an event (a daemon's socket) is ready
// within it, not a whole Interval later; once ready it goes back to Interval.
func TestNotReadyRetriesSoon(t *testing.T) {
	var runs atomic.Int32
	var sw switchable
	sw.set(errors.New("br-int missing"))
	m := NewMonitor(MonitorRequest{Interval: time.Hour, RetryInterval: 5 * time.Millisecond})
	checks := []Check{{Name: "bridge", Run: func(ctx context.Context) error { runs.Add(1); return sw.run(ctx) }}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Run(ctx, checks) }()
	waitFor(t, "evaluations every RetryInterval while not ready", func() bool { return runs.Load() >= 4 })
	sw.set(nil)
	waitFor(t, "ready", func() bool { return m.Check(ctx) == nil })
	time.Sleep(20 * time.Millisecond) // a retry timer set before the verdict changed may fire once
	n := runs.Load()
	time.Sleep(50 * time.Millisecond)
	if got := runs.Load() - n; got > 0 {
		t.Fatalf("%d evaluations in 50 ms while ready with an hourly Interval, want none", got)
	}
}

// TestTriggerEvaluatesAtOnce: a Trigger (an OVSDB update, a link event) makes Tick evaluate
// now, ready or not; triggers while one is pending make one evaluation.
func TestTriggerEvaluatesAtOnce(t *testing.T) {
	var runs atomic.Int32
	var sw switchable
	sw.set(errors.New("br-int missing"))
	var verdicts []error
	verdict := make(chan error, 10)
	m := NewMonitor(MonitorRequest{Interval: time.Hour, RetryInterval: time.Hour, OnChange: func(err error) { verdict <- err }})
	checks := []Check{{Name: "bridge", Run: func(ctx context.Context) error { runs.Add(1); return sw.run(ctx) }}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Run(ctx, checks) }()
	verdicts = append(verdicts, <-verdict)
	sw.set(nil)
	m.Trigger()
	m.Trigger() // coalesced with the first or run after it: either way not lost
	select {
	case err := <-verdict:
		verdicts = append(verdicts, err)
	case <-time.After(5 * time.Second):
		t.Fatalf("no evaluation after Trigger (runs %d)", runs.Load())
	}
	if verdicts[0] == nil || verdicts[1] != nil {
		t.Fatalf("verdicts %v, want not ready then ready", verdicts)
	}
	waitFor(t, "the pending trigger consumed", func() bool { return len(m.trigger) == 0 })
	if n := runs.Load(); n > 3 {
		t.Fatalf("%d evaluations for two triggers, want at most 3", n)
	}
}
