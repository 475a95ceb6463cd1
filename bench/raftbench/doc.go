// Command raftbench prints the clustered-database figures of the README on a
// harness.Cluster whose OVN NB and SB are raft clusters over its first three hosts, each
// host running edgeovn:
//
//   - NB raft leader kill to the next write committed: a northbound client built as edgeovn
//     builds its own (ovn.Connect with every member, leader-only, Echo watchdog) commits one
//     small transaction every 50 ms; the leader's ovsdb-server is SIGKILLed by its PID and
//     the time to the first commit after the kill is taken. The killed member is restarted
//     and rejoins before the next run. Next to it, the steady commit latency.
//
//   - The first pod after the kill: a pod created at the kill, timed to its CNI ADD's reply
//     (edgeovn's controller allocates it and writes its port through the new leader).
//
//   - A new host: from Cluster.AddHost (namespace, Open vSwitch, ovn-controller) through
//     edgeovn ready (CNI STATUS passes) to its first pod's CNI ADD reply.
//
//     go run ./bench/raftbench -bin bin -runs 3      (as root, after make deps build)
package main
