package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// bgpMetrics are registered at the speaker's first report: a host without BGP exports
// none of them.
type bgpMetrics struct {
	once     sync.Once
	peerUp   *prometheus.GaugeVec
	prefixes prometheus.Gauge

	mu     sync.Mutex
	status string
}

// SetBGP records the BGP speaker's state (package bgp's Reporter): edgeovn_bgp_peer_up per
// peer (up: established), edgeovn_bgp_announced_prefixes, and the text BGPStatus returns.
func (m *Metrics) SetBGP(up map[string]bool, prefixes int, status string) {
	if m == nil {
		return
	}
	b := &m.bgp
	b.once.Do(func() {
		b.peerUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "edgeovn_bgp_peer_up",
			Help: "1 while the BGP session with the peer is established, else 0."}, []string{"peer"})
		b.prefixes = prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgeovn_bgp_announced_prefixes",
			Help: "Prefixes this host announces to its BGP peers."})
		m.reg.MustRegister(b.peerUp, b.prefixes)
	})
	b.peerUp.Reset() // a peer no longer configured (a reload) leaves no series behind
	for peer, ok := range up {
		v := 0.0
		if ok {
			v = 1
		}
		b.peerUp.WithLabelValues(peer).Set(v)
	}
	b.prefixes.Set(float64(prefixes))
	b.mu.Lock()
	b.status = status
	b.mu.Unlock()
}

// BGPStatus is the speaker's last state as text; "" when no speaker runs.
func (m *Metrics) BGPStatus() string {
	if m == nil {
		return ""
	}
	m.bgp.mu.Lock()
	defer m.bgp.mu.Unlock()
	return m.bgp.status
}
