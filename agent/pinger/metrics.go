package pinger

import "github.com/prometheus/client_golang/prometheus"

// Label sets, as Kube-OVN's pinger names them.
var (
	podLabels      = []string{"src_node_name", "src_node_ip", "src_pod_ip", "target_node_name", "target_node_ip", "target_pod_ip"}
	nodeLabels     = []string{"src_node_name", "src_node_ip", "src_pod_ip", "target_node_name", "target_node_ip"}
	externalLabels = []string{"src_node_name", "src_node_ip", "src_pod_ip", "target_address"}
	hostLabels     = []string{"nodeName"}
)

// Metrics are the pinger's collectors, with Kube-OVN's names, help, buckets and labels.
type Metrics struct {
	podLatency, nodeLatency, externalLatency *prometheus.HistogramVec
	podLost, podTotal, nodeLost, nodeTotal   *prometheus.CounterVec
	externalLost                             *prometheus.CounterVec
	internalDNSHealthy, internalDNSUnhealthy *prometheus.GaugeVec
	externalDNSHealthy, externalDNSUnhealthy *prometheus.GaugeVec
	internalDNSLatency, externalDNSLatency   *prometheus.HistogramVec
	inconsistentPortBinding                  *prometheus.GaugeVec
}

// NewMetrics makes the collectors; Collectors lists them for a registry.
func NewMetrics() *Metrics {
	hist := func(name, help string, buckets []float64, labels []string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, hostLabels)
	}
	pingBuckets := []float64{.25, .5, 1, 2, 5, 10, 30}
	dnsBuckets := []float64{2, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50}
	return &Metrics{
		podLatency:           hist("pinger_pod_ping_latency_ms", "The latency ms histogram for pod peer ping", pingBuckets, podLabels),
		podLost:              counter("pinger_pod_ping_lost_total", "The lost count for pod peer ping", podLabels),
		podTotal:             counter("pinger_pod_ping_count_total", "The total count for pod peer ping", podLabels),
		nodeLatency:          hist("pinger_node_ping_latency_ms", "The latency ms histogram for pod ping node", pingBuckets, nodeLabels),
		nodeLost:             counter("pinger_node_ping_lost_total", "The lost count for pod ping node", nodeLabels),
		nodeTotal:            counter("pinger_node_ping_count_total", "The total count for pod ping node", nodeLabels),
		externalLatency:      hist("pinger_external_ping_latency_ms", "The latency ms histogram for pod ping external address", append(pingBuckets[:len(pingBuckets):len(pingBuckets)], 50, 100), externalLabels),
		externalLost:         counter("pinger_external_ping_lost_total", "The lost count for pod ping external address", externalLabels),
		internalDNSHealthy:   gauge("pinger_internal_dns_healthy", "If the internal dns request is healthy on this node"),
		internalDNSUnhealthy: gauge("pinger_internal_dns_unhealthy", "If the internal dns request is unhealthy on this node"),
		internalDNSLatency:   hist("pinger_internal_dns_latency_ms", "The latency ms histogram the node request internal dns", dnsBuckets, hostLabels),
		externalDNSHealthy:   gauge("pinger_external_dns_healthy", "If the external dns request is healthy on this node"),
		externalDNSUnhealthy: gauge("pinger_external_dns_unhealthy", "If the external dns request is unhealthy on this node"),
		externalDNSLatency:   hist("pinger_external_dns_latency_ms", "The latency ms histogram the node request external dns", dnsBuckets, hostLabels),
		inconsistentPortBinding: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pinger_inconsistent_port_binding",
			Help: "The number of mismatch port bindings between ovs and ovn-sb"}, hostLabels),
	}
}

// Collectors are every collector, for prometheus.Registerer.Register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.podLatency, m.podLost, m.podTotal, m.nodeLatency, m.nodeLost, m.nodeTotal,
		m.externalLatency, m.externalLost, m.internalDNSHealthy, m.internalDNSUnhealthy, m.internalDNSLatency,
		m.externalDNSHealthy, m.externalDNSUnhealthy, m.externalDNSLatency, m.inconsistentPortBinding}
}

// ms is a duration in (fractional) milliseconds, Kube-OVN's unit.
func ms(d interface{ Seconds() float64 }) float64 { return d.Seconds() * 1000 }

// observe records one target's result as Kube-OVN does: the mean latency (only when some
// reply came: a round with none is loss, not a latency of 0), the lost and total counts.
func observe(lat *prometheus.HistogramVec, lost, total *prometheus.CounterVec, labels []string, r Result) {
	if r.Received > 0 {
		lat.WithLabelValues(labels...).Observe(ms(r.RTT))
	}
	lost.WithLabelValues(labels...).Add(float64(r.Lost()))
	if total != nil {
		total.WithLabelValues(labels...).Add(float64(r.Sent))
	}
}

// forget deletes the series of a target no longer sampled.
func forget(labels []string, vecs ...interface{ DeleteLabelValues(...string) bool }) {
	for _, v := range vecs {
		v.DeleteLabelValues(labels...)
	}
}

// dns records a lookup's outcome.
func dnsResult(healthy, unhealthy *prometheus.GaugeVec, lat *prometheus.HistogramVec, node string, r DNSResult) {
	if r.Err != nil {
		healthy.WithLabelValues(node).Set(0)
		unhealthy.WithLabelValues(node).Set(1)
		return
	}
	healthy.WithLabelValues(node).Set(1)
	unhealthy.WithLabelValues(node).Set(0)
	lat.WithLabelValues(node).Observe(ms(r.Took))
}
