package metrics

import (
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn"
)

// Metrics are the daemon's metrics. Make it with New.
type Metrics struct {
	reg        *prometheus.Registry
	cni        *prometheus.HistogramVec
	leader     prometheus.Gauge
	states     *prometheus.GaugeVec
	reconciles *prometheus.CounterVec
	allocs     *prometheus.CounterVec
	releases   *prometheus.CounterVec
	conflicts  prometheus.Gauge
	lost       *prometheus.CounterVec
	nb, ovs    *ovn.Metrics

	mu   sync.Mutex
	ipam UsageSource // the leading term's IPAM, or nil
	// state and stateReason: see SetControllerState.
	state, stateReason string
	bgp                bgpMetrics // bgp.go
	// pinger reports the pinger's last round (SetPingerReport).
	pinger func() string
}

// UsageSource is the IPAM whose subnets' usage is exported.
type UsageSource interface {
	Usage() []ipam.Usage
}

var _ UsageSource = (*ipam.IPAM)(nil)

// CNI results: the label says what the runtime was told.
const (
	ResultOK          = "ok"
	ResultRetry       = "retry"       // CNI code 11: try again later (not ready, timeouts)
	ResultUnavailable = "unavailable" // CNI code 50: the plugin is not available (STATUS)
	ResultError       = "error"       // any other CNI error code
)

// New returns the metrics, registered. The OVSDB clients' transactions are logged as slow
// on log above ovn.DefaultSlowTransaction.
func New(log *slog.Logger) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		cni: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edgeovn_cni_request_duration_seconds",
			Help:    "CNI requests served by this host's daemon, by verb (ADD, DEL, CHECK, STATUS, GC) and result (ok, retry, unavailable, error).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}, []string{"verb", "result"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgeovn_controller_leader",
			Help: "1 while this host holds the controller Lease and runs the controller role, else 0."}),
		states: newStateGauge(),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeovn_controller_reconciles_total",
			Help: "Objects the controller role synced, by kind (pod, node, service, namespace) and result (ok, error: retried)."}, []string{"kind", "result"}),
		allocs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeovn_ipam_allocations_total",
			Help: "Allocations made durable in the IPAM database, by subnet."}, []string{"subnet"}),
		releases: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeovn_ipam_releases_total",
			Help: "Allocations released in the IPAM database, by subnet."}, []string{"subnet"}),
		conflicts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edgeovn_host_route_conflicts",
			Help: "Prefixes this host's node role did not route through ovn0 because a route or address it does not own covers them (see the log and edgeovn status)."}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edgeovn_pod_binding_reclaims_total",
			Help: "Reclaims of local pod ports whose OVN binding was lost after ovn-installed (released by ovn-controller), by result (reclaimed: written, failed: not); a port that stays lost is reclaimed again with a growing delay."}, []string{"result"}),
		nb:  ovn.NewMetrics(log, 0),
		ovs: ovn.NewMetrics(log, 0),
	}
	m.reg.MustRegister(m.cni, m.leader, m.states, m.reconciles, m.allocs, m.releases, m.conflicts, m.lost,
		newOVSDBCollector(map[string]*ovn.Metrics{"OVN_Northbound": m.nb, "Open_vSwitch": m.ovs}),
		usageCollector{m}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveCNI records one CNI request: its verb, the CNI error code it answered (0: success)
// and how long it took.
func (m *Metrics) ObserveCNI(verb string, code uint, took time.Duration) {
	if m == nil {
		return
	}
	m.cni.WithLabelValues(verb, cniResult(code)).Observe(took.Seconds())
}

func cniResult(code uint) string {
	switch code {
	case 0:
		return ResultOK
	case 11:
		return ResultRetry
	case 50:
		return ResultUnavailable
	}
	return ResultError
}

// Repair results of a lost pod binding.
const (
	BindingReclaimed = "reclaimed"
	BindingFailed    = "failed"
)

// ObserveLostBinding records one reclaim of a local pod port found without its OVN binding
// and whether it was written (BindingReclaimed) or failed (BindingFailed).
func (m *Metrics) ObserveLostBinding(result string) {
	if m == nil {
		return
	}
	m.lost.WithLabelValues(result).Inc()
}

// SetLeader records whether this host runs the controller role.
func (m *Metrics) SetLeader(leading bool) {
	if m == nil {
		return
	}
	v := 0.0
	if leading {
		v = 1
	}
	m.leader.Set(v)
}

// SetRouteConflicts records how many prefixes the host wiring left out for a route or
// address it does not own.
func (m *Metrics) SetRouteConflicts(n int) {
	if m == nil {
		return
	}
	m.conflicts.Set(float64(n))
}

// ObserveReconcile records one sync of an object of kind by the controller role.
func (m *Metrics) ObserveReconcile(kind string, err error) {
	if m == nil {
		return
	}
	result := ResultOK
	if err != nil {
		result = ResultError
	}
	m.reconciles.WithLabelValues(kind, result).Inc()
}

// NBTransactions and OVSTransactions are the counters the northbound and Open_vSwitch clients
// record their write transactions in (ovn.ConnectRequest.Metrics); nil for a nil Metrics.
func (m *Metrics) NBTransactions() *ovn.Metrics {
	if m == nil {
		return nil
	}
	return m.nb
}

// OVSTransactions: see NBTransactions.
func (m *Metrics) OVSTransactions() *ovn.Metrics {
	if m == nil {
		return nil
	}
	return m.ovs
}

// SetIPAM exports src's usage from now on; nil stops (the term of leadership ended).
func (m *Metrics) SetIPAM(src UsageSource) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.ipam = src
	m.mu.Unlock()
}

func (m *Metrics) usageSource() UsageSource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ipam
}
