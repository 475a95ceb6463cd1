package metrics

import "github.com/prometheus/client_golang/prometheus"

// Controller states of this host, the values of edgeovn_controller_state's label.
const (
	// StateIneligible: this host does not campaign for the controller Lease (northbound
	// unreachable, API rights missing); ControllerState says why.
	StateIneligible = "ineligible"
	// StateCandidate: eligible, campaigning (or waiting for the holder's Lease to lapse).
	StateCandidate = "candidate"
	// StateLeader: holds the Lease and runs the controller role.
	StateLeader = "leader"
)

var controllerStates = []string{StateIneligible, StateCandidate, StateLeader}

func newStateGauge() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "edgeovn_controller_state",
		Help: "1 for this host's controller state (ineligible: does not campaign, see edgeovn status for why; candidate: campaigning; leader), 0 for the others."},
		[]string{"state"})
}

// SetControllerState records this host's controller state and, when ineligible, why.
func (m *Metrics) SetControllerState(state, reason string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.state, m.stateReason = state, reason
	m.mu.Unlock()
	for _, s := range controllerStates {
		v := 0.0
		if s == state {
			v = 1
		}
		m.states.WithLabelValues(s).Set(v)
	}
}

// ControllerState returns this host's controller state and the reason given with it ("" and
// "" before the controller role's election started).
func (m *Metrics) ControllerState() (state, reason string) {
	if m == nil {
		return "", ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state, m.stateReason
}
