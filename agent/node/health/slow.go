package health

import (
	"errors"
	"time"
)

// DefaultSlowGrace is how long a check that passed may then time out without the verdict
// saying not ready. A daemon that is busy (ovs-vswitchd adding hundreds of ports at once
// after a reboot) answers its control socket late; one that is gone refuses at once, and that
// is not tolerated. Without the grace, a burst of ADDs made readiness flip to not ready and
// the ADDs behind it fail with "try again later", which loaded the daemons further.
const DefaultSlowGrace = 5 * time.Second

// tolerateSlow records which checks passed and drops from err the failures that only timed
// out on a check that passed within SlowGrace; it returns nil when none is left. Called by
// evaluate only, one evaluation at a time.
func (m *Monitor) tolerateSlow(checks []Check, err error) error {
	now := m.req.Now()
	var nr *NotReadyError
	failed := map[string]bool{}
	if errors.As(err, &nr) {
		for _, f := range nr.Failures {
			failed[f.Check] = true
		}
	} else if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.passed == nil {
		m.passed = map[string]time.Time{}
	}
	for _, c := range checks {
		if !failed[c.Name] {
			m.passed[c.Name] = now
		}
	}
	if nr == nil || m.req.SlowGrace < 0 {
		return err
	}
	var kept []Failure
	for _, f := range nr.Failures {
		last, ok := m.passed[f.Check]
		if f.TimedOut && ok && now.Sub(last) < m.req.SlowGrace {
			m.req.Log.Warn("node datapath check slow, still ready within its grace", "check", f.Check,
				"last_passed", now.Sub(last).Round(time.Millisecond), "grace", m.req.SlowGrace, "err", f.Err)
			continue
		}
		kept = append(kept, f)
	}
	if len(kept) == 0 {
		return nil
	}
	return &NotReadyError{Failures: kept}
}
