package health

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// switchable is a check whose answer the test sets.
type switchable struct{ err atomic.Pointer[error] }

func (s *switchable) set(err error) { s.err.Store(&err) }
func (s *switchable) run(context.Context) error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestMonitorFlips: each failing check makes the verdict not ready and reports it once;
// recovery is reported; the watchdog is held back only by a liveness check, a stopped
// Run or an evaluation that is too old.
func TestMonitorFlips(t *testing.T) {
	var ovsdb, vswitchd switchable
	clk := &clock{now: time.Unix(1000, 0)}
	var changes []string
	var mu sync.Mutex
	m := NewMonitor(MonitorRequest{Interval: time.Hour, Now: clk.Now, OnChange: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			changes = append(changes, "ready")
		} else {
			changes = append(changes, err.Error())
		}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Check(ctx); !errors.Is(err, ErrNotRunning) || m.Alive() == nil {
		t.Fatalf("before Run: Check %v, Alive %v", err, m.Alive())
	}
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []Check{{Name: "ovsdb", Run: ovsdb.run, Liveness: true}, {Name: "ovs-vswitchd", Run: vswitchd.run}})
	}()
	waitFor(t, "first evaluation", func() bool { return m.Alive() == nil })

	vswitchd.set(errGone)
	if err := m.Check(ctx); !errors.Is(err, errGone) {
		t.Fatalf("ovs-vswitchd gone: %v", err)
	}
	if err := m.Alive(); err != nil {
		t.Fatalf("a dead ovs-vswitchd must not starve the watchdog: %v", err)
	}
	_ = m.Check(ctx) // same verdict: not reported again
	vswitchd.set(nil)
	ovsdb.set(errStuck)
	if err := m.Check(ctx); !errors.Is(err, errStuck) || !errors.Is(m.Alive(), errStuck) {
		t.Fatalf("ovsdb lost: Check %v, Alive %v", err, m.Alive())
	}
	ovsdb.set(nil)
	if err := m.Check(ctx); err != nil || m.Alive() != nil {
		t.Fatalf("recovered: Check %v, Alive %v", err, m.Alive())
	}
	clk.add(time.Hour * 4)
	if err := m.Alive(); err == nil || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("no evaluation for 4 intervals: Alive %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := m.Alive(); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("after Run: Alive %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"ready", "datapath not ready: ovs-vswitchd: gone", "datapath not ready: ovsdb: stuck", "ready"}
	if strings.Join(changes, "|") != strings.Join(want, "|") {
		t.Fatalf("changes reported:\n%q\nwant\n%q", changes, want)
	}
}

// joinedCallers is how many callers have waited on an evaluation in flight.
func (m *Monitor) joinedCallers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.joined
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConcurrentChecksShareOneEvaluation: ADDs arriving together do not queue one
// evaluation each behind each other; a caller that gives up does not spoil the verdict of
// the others.
func TestConcurrentChecksShareOneEvaluation(t *testing.T) {
	var runs atomic.Int32
	release := make(chan struct{})
	slow := func(ctx context.Context) error {
		runs.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	m := NewMonitor(MonitorRequest{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Run(ctx, []Check{{Name: "slow", Run: slow}}) }()
	waitFor(t, "first evaluation started", func() bool { return runs.Load() == 1 })
	impatient, giveUp := context.WithCancel(context.Background())
	giveUp()
	if err := m.Check(impatient); !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller that gave up: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- m.Check(context.Background()) }()
	}
	waitFor(t, "the 21 callers waiting on the evaluation in flight", func() bool { return m.joinedCallers() >= 21 })
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("shared verdict: %v", err)
		}
	}
	if n := runs.Load(); n > 3 {
		t.Fatalf("%d evaluations for 21 callers", n)
	}
}

// TestRecheckSeesTheChange: a caller that has just changed what a check looks at gets a
// verdict of an evaluation that began after its call, never the one in flight (which saw the
// old state); a plain Check shares the one in flight. Without Recheck, a node role that marks
// its files installed while the timer's evaluation runs would wait a whole interval for
// READY=1.
func TestRecheckSeesTheChange(t *testing.T) {
	var installed atomic.Bool
	began := make(chan struct{}, 10)
	release := make(chan struct{})
	cni := func(ctx context.Context) error {
		seen := installed.Load() // the state as the evaluation found it
		began <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !seen {
			return errGone
		}
		return nil
	}
	m := NewMonitor(MonitorRequest{Interval: time.Hour, CheckTimeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = m.Run(ctx, []Check{{Name: "cni", Run: cni}}) }()
	<-began // the timer's first evaluation is in flight, having seen "not installed"
	installed.Store(true)
	shared, fresh := make(chan error, 1), make(chan error, 1)
	go func() { shared <- m.Check(ctx) }()
	go func() { fresh <- m.Recheck(ctx) }()
	waitFor(t, "both callers waiting on the evaluation in flight", func() bool { return m.joinedCallers() >= 2 })
	release <- struct{}{} // the first evaluation ends: not ready
	if err := <-shared; !errors.Is(err, errGone) {
		t.Fatalf("Check shared the evaluation in flight: got %v, want its verdict %v", err, errGone)
	}
	select {
	case err := <-fresh:
		t.Fatalf("Recheck returned %v, the verdict of the evaluation that began before the change", err)
	case <-began: // Recheck started a new evaluation, which sees the change
	}
	release <- struct{}{}
	if err := <-fresh; err != nil {
		t.Fatalf("Recheck after the change: %v, want ready", err)
	}
}

// TestAttachThenTick: attached checks answer Check at once, before any tick; Tick leaves the
// first evaluation to the caller and then evaluates every interval; Tick without Attach, or a
// second Attach, is refused.
func TestAttachThenTick(t *testing.T) {
	var runs atomic.Int32
	counted := []Check{{Name: "counted", Run: func(context.Context) error { runs.Add(1); return nil }}}
	m := NewMonitor(MonitorRequest{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := m.Tick(ctx); err == nil {
		t.Fatal("Tick without attached checks ran")
	}
	if err := m.Attach(counted); err != nil {
		t.Fatal(err)
	}
	if err := m.Attach(nil); err == nil {
		t.Fatal("a second Attach was accepted")
	}
	done := make(chan error, 1)
	go func() { done <- m.Tick(ctx) }()
	time.Sleep(20 * time.Millisecond)
	if n := runs.Load(); n != 0 {
		t.Fatalf("%d evaluations before the first tick, want none", n)
	}
	if err := m.Recheck(ctx); err != nil || runs.Load() != 1 {
		t.Fatalf("Recheck after Attach: %v, %d evaluations", err, runs.Load())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := m.Check(context.Background()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("after Tick returned: %v, want %v", err, ErrNotRunning)
	}

	ticking := NewMonitor(MonitorRequest{Interval: 5 * time.Millisecond})
	if err := ticking.Attach(counted); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() { _ = ticking.Tick(ctx2) }()
	waitFor(t, "an evaluation at a tick", func() bool { return runs.Load() >= 2 })
}

// TestEvaluationLoggedAtDebug: at debug level each evaluation says how long it took and which
// check was slowest, which is how a slow start's "ready" phase is read.
func TestEvaluationLoggedAtDebug(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	slow := func(context.Context) error { time.Sleep(20 * time.Millisecond); return nil }
	m := NewMonitor(MonitorRequest{Interval: time.Hour, Log: log})
	if err := m.Attach([]Check{{Name: "fast", Run: fixed(nil)}, {Name: "ovs-vswitchd", Run: slow}}); err != nil {
		t.Fatal(err)
	}
	if err := m.Recheck(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, `msg="node datapath evaluated"`) || !strings.Contains(out, "slowest_check=ovs-vswitchd") || !strings.Contains(out, "ready=true") {
		t.Fatalf("debug log lacks the evaluation's timing and slowest check:\n%s", out)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestCheckRecentReusesOnlyAPassingRecentVerdict: a passing verdict younger than maxAge is
// taken without evaluating; an older one is evaluated again; a failing verdict is never
// taken (the next caller evaluates and sees the recovery), and a stopped monitor says so.
func TestCheckRecentReusesOnlyAPassingRecentVerdict(t *testing.T) {
	var runs atomic.Int32
	var ovs switchable
	counted := func(ctx context.Context) error { runs.Add(1); return ovs.run(ctx) }
	clk := &clock{now: time.Unix(1000, 0)}
	m := NewMonitor(MonitorRequest{Interval: time.Hour, Now: clk.Now})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []Check{{Name: "ovs", Run: counted}}) }()
	waitFor(t, "first verdict", func() bool { return m.hasVerdict() })
	evaluations := func() int32 { return runs.Load() }

	before := evaluations()
	clk.add(900 * time.Millisecond)
	if err := m.CheckRecent(ctx, time.Second); err != nil || evaluations() != before {
		t.Fatalf("passing verdict 0.9 s old, max 1 s: err %v, %d evaluations (want none)", err, evaluations()-before)
	}
	clk.add(200 * time.Millisecond)
	ovs.set(errors.New("ovs-vswitchd not running"))
	if err := m.CheckRecent(ctx, time.Second); err == nil || evaluations() != before+1 {
		t.Fatalf("verdict 1.1 s old, max 1 s: err %v, %d evaluations (want one, failing)", err, evaluations()-before)
	}
	if err := m.CheckRecent(ctx, time.Hour); err == nil || evaluations() != before+2 {
		t.Fatalf("failing verdict just made: err %v, %d evaluations (want it evaluated again)", err, evaluations()-before)
	}
	ovs.set(nil)
	if err := m.CheckRecent(ctx, time.Hour); err != nil || evaluations() != before+3 {
		t.Fatalf("after recovery: err %v, %d evaluations (want a new passing one)", err, evaluations()-before)
	}
	cancel()
	<-done
	if err := m.CheckRecent(context.Background(), time.Hour); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("stopped monitor, recent passing verdict: %v, want ErrNotRunning", err)
	}
}
