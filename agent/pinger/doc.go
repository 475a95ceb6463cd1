// Package pinger is the node role's network-quality prober, Kube-OVN's kube-ovn-pinger in
// process: every interval it pings a sample of the pods of every host, every host's ovn0 and
// the configured external addresses, resolves names through the cluster DNS, counts the
// OVS pod ports whose logical port is not bound in the southbound, and exports the results
// under Kube-OVN's metric names and labels (pinger_pod_ping_*, pinger_node_ping_*,
// pinger_external_ping_*, pinger_internal_dns_*, pinger_external_dns_*,
// pinger_inconsistent_port_binding), so its Grafana dashboards work unchanged.
//
// Where the pings leave from: Kube-OVN's pinger runs in a pod; this one runs on the host and
// its pings leave through ovn0 (the host's port on the join switch) into the cluster router,
// so they cross the same switches, router and tunnels as a pod's, plus the join switch.
// src_pod_ip is the host's ovn0 address, and target_node_ip of the node pings is the
// target's ovn0 address (Kube-OVN's pings the Node's InternalIP from a pod).
//
// Invariants: off unless enabled. A round is bounded: at most PodsPerNode pods per host and
// MaxTargets pod and host addresses in all (a dual-stack pod or ovn0 is one target per family,
// never split), each pinged Count times over one raw ICMP socket per family (one goroutine
// sending, one receiving, whatever the number of targets), the pods listed
// per host with a limit, never the cluster's whole pod list, and listed again only every 30 s
// (1 + hosts API requests), the rounds between reuse the sample; a round where a target
// answered nothing lists again first, and a target gone since is not reported (no false loss
// for a deleted pod). The sample is stable (pods in
// name order) and the series of a target that left the sample are deleted, so the exported
// series are bounded too (Kube-OVN #2764). An IPv6 target's src_pod_ip is ovn0's IPv6 address.
//
// Concurrency: Run is one goroutine; Last may be called from any.
package pinger
