package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edgeovn/edgeovn/ovn"
)

// ovsdbCollector exports the transaction counters ovn.Metrics keeps for each database client.
type ovsdbCollector struct {
	dbs                       map[string]*ovn.Metrics
	txns, failures, conflicts *prometheus.Desc
	slow, latency             *prometheus.Desc
}

func newOVSDBCollector(dbs map[string]*ovn.Metrics) *ovsdbCollector {
	label := []string{"db"}
	return &ovsdbCollector{dbs: dbs,
		txns: prometheus.NewDesc("edgeovn_ovsdb_transactions_total",
			"Write transactions sent to an OVSDB database (OVN_Northbound by the controller role, Open_vSwitch by the node role).", label, nil),
		failures: prometheus.NewDesc("edgeovn_ovsdb_transaction_failures_total",
			"Write transactions that failed (transport error or a failed operation), conflicts included.", label, nil),
		conflicts: prometheus.NewDesc("edgeovn_ovsdb_transaction_conflicts_total",
			"Write transactions refused because the database changed under them (a wait guard fired); retried.", label, nil),
		slow: prometheus.NewDesc("edgeovn_ovsdb_transaction_slow_total",
			"Write transactions slower than 500 ms (each is also logged).", label, nil),
		latency: prometheus.NewDesc("edgeovn_ovsdb_transaction_duration_seconds",
			"Latency of write transactions, from the request to the database's reply.", label, nil),
	}
}

func (c *ovsdbCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.txns, c.failures, c.conflicts, c.slow, c.latency} {
		ch <- d
	}
}

func (c *ovsdbCollector) Collect(ch chan<- prometheus.Metric) {
	for db, m := range c.dbs {
		s := m.Stats()
		ch <- prometheus.MustNewConstMetric(c.txns, prometheus.CounterValue, float64(s.Transactions), db)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(s.Failures), db)
		ch <- prometheus.MustNewConstMetric(c.conflicts, prometheus.CounterValue, float64(s.Conflicts), db)
		ch <- prometheus.MustNewConstMetric(c.slow, prometheus.CounterValue, float64(s.Slow), db)
		ch <- prometheus.MustNewConstHistogram(c.latency, uint64(s.Transactions), s.TotalLatency.Seconds(), cumulative(s), db)
	}
}

// cumulative turns ovn.Stats's per-bucket counts into Prometheus's cumulative ones; the last
// bucket (above the largest bound) is +Inf, which the sample count carries.
func cumulative(s ovn.Stats) map[float64]uint64 {
	out := make(map[float64]uint64, len(ovn.LatencyBuckets))
	var sum uint64
	for i, bound := range ovn.LatencyBuckets {
		if i < len(s.Buckets) {
			sum += uint64(s.Buckets[i])
		}
		out[bound.Seconds()] = sum
	}
	return out
}

// usageCollector exports the usage of each subnet of the leading term's IPAM.
type usageCollector struct{ m *Metrics }

var (
	usedDesc = prometheus.NewDesc("edgeovn_ipam_addresses_used",
		"Addresses held by pods and nodes, by subnet and CIDR (exported by the controller role's host).", []string{"subnet", "cidr"}, nil)
	capacityDesc = prometheus.NewDesc("edgeovn_ipam_addresses_capacity",
		"Addresses a subnet's CIDR can hand out: its usable range less the gateway and excluded ranges.", []string{"subnet", "cidr"}, nil)
)

func (usageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- usedDesc
	ch <- capacityDesc
}

func (c usageCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.usageSource()
	if src == nil {
		return
	}
	for _, u := range src.Usage() {
		ch <- prometheus.MustNewConstMetric(usedDesc, prometheus.GaugeValue, float64(u.Used), u.Subnet, u.CIDR.String())
		ch <- prometheus.MustNewConstMetric(capacityDesc, prometheus.GaugeValue, u.Capacity, u.Subnet, u.CIDR.String())
	}
}
