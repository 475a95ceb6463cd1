// Package metrics owns edgeovn's Prometheus metrics, in a registry of its own (no global
// state): CNI requests by verb and result, IPAM allocations and releases made durable and each
// subnet's usage, OVSDB write transactions and their latency (the northbound and the local
// Open_vSwitch clients, counted by ovn.Metrics), whether this host holds the controller Lease,
// and the controller's reconciles by kind and result; plus Go runtime and process metrics,
// and the collectors another component registers (Register: the pinger's, under Kube-OVN's
// names), and the pinger's last round as text (SetPingerReport, PingerReport: /pinger).
//
// Invariants: every method works on a nil *Metrics and does nothing, so components and tests
// that do not export metrics need no stand-in. Counters only grow for the life of the process:
// the transaction counters live in ovn.Metrics values made here, which each new client of a
// term of leadership reuses. IPAM usage is read at scrape time from the IPAM of the current
// term, and absent while this host does not lead. The BGP metrics (bgp.go) are registered at the
// speaker's first report, so a host without a speaker exports none.
//
// Concurrency: safe for concurrent use.
package metrics
