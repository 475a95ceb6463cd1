// Command svcbench measures edgeovn's Services on the real rig (OVN, OVS userspace datapath,
// kube-apiserver) and prints the README's table: a Service's endpoint change to its load
// balancer updated in OVN northbound (p50/p95), N Services with 3 endpoints each programmed
// from a cold start (seconds, load balancer rows), and CNI ADD p50 with them present and, in the same run,
// once they are deleted (what the Services cost, whatever the machine's load). With -trace it
// also prints where the ADDs' time went in both: the daemon's own steps (read from its debug
// log), the time outside it, each plugin's exec alone, and per ADD the CPU time of the rig's
// processes and the full recomputes of ovn-northd and ovn-controller.
//
//	go run ./bench/svcbench -bin bin -services 1000 [-trace]     (as root; make deps build first)
package main
