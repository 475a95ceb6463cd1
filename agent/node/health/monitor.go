package health

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// DefaultInterval is how often the Monitor re-evaluates on its own while ready.
const DefaultInterval = 2 * time.Second

// DefaultRetryInterval is how often it re-evaluates while not ready, between the events that
// trigger an evaluation (Trigger): what comes up without an event (a daemon's control
// socket) is seen within it, not a whole Interval later. At a start, that Interval was on
// the first pod's path.
const DefaultRetryInterval = 100 * time.Millisecond

// ErrNotRunning: no node role is evaluating the checks (not started yet, or stopped).
var ErrNotRunning = errors.New("node role health monitor not running")

// MonitorRequest configures a Monitor.
type MonitorRequest struct {
	Interval      time.Duration // default DefaultInterval
	RetryInterval time.Duration // default DefaultRetryInterval
	CheckTimeout  time.Duration // default DefaultCheckTimeout
	// SlowGrace is how long a check that passed may time out before the verdict says not
	// ready (slow.go); default DefaultSlowGrace, negative: never tolerated.
	SlowGrace time.Duration
	// OnChange receives every change of the verdict, the first one included: nil when the
	// datapath became ready, the reason when it stopped being ready.
	OnChange func(err error)
	Log      *slog.Logger     // default discards
	Now      func() time.Time // default time.Now; tests move it
}

// Monitor evaluates the node's checks on a timer and on demand and reports changes.
type Monitor struct {
	req MonitorRequest

	mu       sync.Mutex
	inflight *evaluation // the evaluation running now, which callers join
	started  uint64      // evaluations started so far; an evaluation's seq is its number
	checks   []Check
	running  bool
	last     time.Time // when the last evaluation ended
	verdict  error
	reported bool // OnChange has been called at least once
	// trigger holds a token when an evaluation was asked for (Trigger) and Tick has not run it.
	trigger chan struct{}
	// joined counts the callers that have waited on an evaluation in flight (tests wait on it).
	joined int
	// passed is when each check last passed (slow.go).
	passed map[string]time.Time
}

// NewMonitor returns a Monitor with no checks: not ready and not alive until Attach.
func NewMonitor(req MonitorRequest) *Monitor {
	if req.Interval <= 0 {
		req.Interval = DefaultInterval
	}
	if req.RetryInterval <= 0 || req.RetryInterval > req.Interval {
		req.RetryInterval = min(DefaultRetryInterval, req.Interval)
	}
	if req.CheckTimeout <= 0 {
		req.CheckTimeout = DefaultCheckTimeout
	}
	if req.SlowGrace == 0 {
		req.SlowGrace = DefaultSlowGrace
	}
	if req.Log == nil {
		req.Log = slog.New(slog.DiscardHandler)
	}
	if req.Now == nil {
		req.Now = time.Now
	}
	return &Monitor{req: req, verdict: ErrNotRunning, trigger: make(chan struct{}, 1)}
}

// Attach makes checks the Monitor's: from its return on, Check and Recheck evaluate them.
// Tick must follow. The first evaluation is the caller's: the node role evaluates as soon as
// it is ready to (once its files are in place), sparing itself one that could only say
// "starting" and would hold up its Recheck.
func (m *Monitor) Attach(checks []Check) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		return errors.New("run health monitor: already running")
	}
	m.checks, m.running = checks, true
	return nil
}

// Tick evaluates the attached checks every Interval while ready, every RetryInterval while
// not, and at once on Trigger, until ctx ends; then it detaches them.
func (m *Monitor) Tick(ctx context.Context) error {
	m.mu.Lock()
	running := m.running
	m.mu.Unlock()
	if !running {
		return errors.New("run health monitor: no checks attached")
	}
	defer func() {
		m.mu.Lock()
		m.running = false
		m.mu.Unlock()
	}()
	t := time.NewTimer(m.next())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-m.trigger:
			if !m.hasVerdict() {
				continue // the first verdict is Attach's caller's (it knows when it can be yes)
			}
		}
		_ = m.Check(ctx)
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(m.next())
	}
}

// Trigger asks Tick for an evaluation now: something the checks look at has changed (an
// OVSDB update, a link event). It never blocks; triggers that arrive before Tick runs the
// evaluation make one evaluation.
func (m *Monitor) Trigger() {
	select {
	case m.trigger <- struct{}{}:
	default:
	}
}

func (m *Monitor) hasVerdict() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reported
}

// Ready reports whether the last verdict was ready (false before the first).
func (m *Monitor) Ready() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reported && m.verdict == nil
}

// next is how long Tick waits for its next evaluation: RetryInterval while not ready,
// Interval while ready and before the first verdict (which Attach's caller asks for itself).
func (m *Monitor) next() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reported && m.verdict != nil {
		return m.req.RetryInterval
	}
	return m.req.Interval
}

// evaluation is one run of the checks that concurrent callers share.
type evaluation struct {
	seq  uint64
	done chan struct{}
	err  error
}

// Check evaluates every check now and returns the verdict: nil, ErrNotRunning or a
// *NotReadyError. A caller arriving while an evaluation runs (concurrent ADDs) shares its
// verdict, which is at most one evaluation old.
func (m *Monitor) Check(ctx context.Context) error {
	return m.check(ctx, false)
}

// CheckRecent is Check for a caller that can act on a passing verdict up to maxAge old: a CNI
// ADD, whose later steps fail on their own when the datapath has gone since. A burst of ADDs
// would otherwise keep evaluations running back to back, each probing ovs-vswitchd and
// ovn-controller while both are busy wiring that burst, and each ADD would wait on one
// (measured on a 100-pod reboot: 142 ms of a 611 ms ADD at p50). A failing verdict is never
// reused, so the first ADD after a recovery sees it.
func (m *Monitor) CheckRecent(ctx context.Context, maxAge time.Duration) error {
	m.mu.Lock()
	recent := m.running && m.reported && m.verdict == nil && m.req.Now().Sub(m.last) <= maxAge
	m.mu.Unlock()
	if recent {
		return nil
	}
	return m.Check(ctx)
}

// Recheck is Check for a caller that has just changed what the checks look at (the node
// role marking its files installed): it never shares an evaluation that began before the
// call, whose verdict may predate the change; it waits for that one to end and shares or
// starts the next.
func (m *Monitor) Recheck(ctx context.Context) error {
	return m.check(ctx, true)
}

func (m *Monitor) check(ctx context.Context, fresh bool) error {
	m.mu.Lock()
	after := m.started // with fresh, only an evaluation numbered above this will do
	for {
		e := m.inflight
		if e == nil {
			break
		}
		m.joined++
		m.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !fresh || e.seq > after {
			return e.err
		}
		m.mu.Lock()
	}
	m.started++
	e := &evaluation{seq: m.started, done: make(chan struct{})}
	m.inflight = e
	m.mu.Unlock()
	// Not the caller's cancellation: others share this verdict. Each check has its timeout.
	e.err = m.evaluate(context.WithoutCancel(ctx))
	m.mu.Lock()
	m.inflight = nil
	m.mu.Unlock()
	close(e.done)
	return e.err
}

// evaluate runs the checks and records and reports the verdict; Check makes sure only one
// runs at a time, so verdicts are reported in order.
func (m *Monitor) evaluate(ctx context.Context) error {
	m.mu.Lock()
	checks, running := m.checks, m.running
	m.mu.Unlock()
	if !running {
		return ErrNotRunning
	}
	t0 := time.Now()
	slowest, err := evaluateTimed(ctx, checks, m.req.CheckTimeout)
	err = m.tolerateSlow(checks, err)
	m.req.Log.Debug("node datapath evaluated", "took", time.Since(t0), "slowest_check", slowest.Check,
		"slowest_took", slowest.Took, "ready", err == nil)
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
