package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Register adds another component's collectors (the pinger's, under Kube-OVN's names) to
// the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) error {
	if m == nil {
		return nil
	}
	for _, c := range cs {
		if err := m.reg.Register(c); err != nil {
			return fmt.Errorf("register collector: %w", err)
		}
	}
	return nil
}

// SetPingerReport sets what /pinger answers: the pinger's last round, as text.
func (m *Metrics) SetPingerReport(f func() string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.pinger = f
	m.mu.Unlock()
}

// PingerReport is the pinger's last round; ok false while no pinger runs.
func (m *Metrics) PingerReport() (string, bool) {
	if m == nil {
		return "", false
	}
	m.mu.Lock()
	f := m.pinger
	m.mu.Unlock()
	if f == nil {
		return "", false
	}
	return f(), true
}
