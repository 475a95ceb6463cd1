package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultInterval is how often the Monitor re-evaluates on its own.
const DefaultInterval = 2 * time.Second

// ErrNotRunning: no node role is evaluating the checks (not started yet, or stopped).
var ErrNotRunning = errors.New("node role health monitor not running")

// MonitorRequest configures a Monitor.
type MonitorRequest struct {
	Interval     time.Duration // default DefaultInterval
	CheckTimeout time.Duration // default DefaultCheckTimeout
	// OnChange receives every change of the verdict, the first one included: nil when the
	// datapath became ready, the reason when it stopped being ready.
	OnChange func(err error)
	Log      *slog.Logger     // default discards
	Now      func() time.Time // default time.Now; tests move it
}

// Monitor evaluates the node's checks on a timer and on demand and reports changes.
type Monitor struct {
	req MonitorRequest

	evalMu sync.Mutex // one evaluation (and its OnChange) at a time, so verdicts stay in order

	mu       sync.Mutex
	checks   []Check
	running  bool
	last     time.Time // when the last evaluation ended
	verdict  error
	reported bool // OnChange has been called at least once
}

// NewMonitor returns a Monitor with no checks: not ready and not alive until Run.
func NewMonitor(req MonitorRequest) *Monitor {
	if req.Interval <= 0 {
		req.Interval = DefaultInterval
	}
	if req.CheckTimeout <= 0 {
		req.CheckTimeout = DefaultCheckTimeout
	}
	if req.Log == nil {
		req.Log = slog.New(slog.DiscardHandler)
	}
	if req.Now == nil {
		req.Now = time.Now
	}
	return &Monitor{req: req, verdict: ErrNotRunning}
}

// Run evaluates checks now and then every Interval until ctx ends.
func (m *Monitor) Run(ctx context.Context, checks []Check) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return fmt.Errorf("run health monitor: %w", errors.New("already running"))
	}
	m.checks, m.running = checks, true
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()
	t := time.NewTicker(m.req.Interval)
	defer t.Stop()
	for {
		_ = m.Check(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Check evaluates every check now and returns the verdict: nil, ErrNotRunning or a
// *NotReadyError.
func (m *Monitor) Check(ctx context.Context) error {
	m.evalMu.Lock()
	defer m.evalMu.Unlock()
	m.mu.Lock()
	checks, running := m.checks, m.running
	m.mu.Unlock()
	if !running {
		return ErrNotRunning
	}
	err := Evaluate(ctx, checks, m.req.CheckTimeout)
	if ctx.Err() != nil && err != nil {
		return err // the caller gave up (STATUS's client, shutdown): not a verdict on the datapath
	}
	m.mu.Lock()
	changed := !m.reported || (err == nil) != (m.verdict == nil) || (err != nil && err.Error() != m.verdict.Error())
	m.verdict, m.last, m.reported = err, m.req.Now(), true
	m.mu.Unlock()
	if changed {
		m.report(err)
	}
	return err
}

func (m *Monitor) report(err error) {
	if err == nil {
		m.req.Log.Info("node datapath ready")
	} else {
		m.req.Log.Warn("node datapath not ready", "err", err)
	}
	if m.req.OnChange != nil {
		m.req.OnChange(err)
	}
}

// Alive is the watchdog's question: nil while Run runs, has evaluated within the last few
// intervals, and no Liveness check failed in its last evaluation.
func (m *Monitor) Alive() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		return ErrNotRunning
	}
	if age := m.req.Now().Sub(m.last); m.last.IsZero() || age > m.staleAfter() {
		return fmt.Errorf("health monitor stalled: last evaluation %v ago", age.Round(time.Millisecond))
	}
	var nr *NotReadyError
	if errors.As(m.verdict, &nr) && nr.livenessFailed() {
		return m.verdict
	}
	return nil
}

// staleAfter leaves room for a slow evaluation (every check at its timeout) on top of a
// few missed ticks.
func (m *Monitor) staleAfter() time.Duration {
	return 3*m.req.Interval + time.Duration(len(m.checks))*m.req.CheckTimeout
}
