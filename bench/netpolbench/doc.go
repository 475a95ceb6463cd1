// Command netpolbench measures edgeovn's NetworkPolicy on the real rig (OVN, OVS userspace
// datapath, kube-apiserver) and prints the README's table: P policies over N pods programmed
// (edgeovn start to the last policy's ACLs in OVN northbound, with the ACL, address set and
// port group counts), and a pod label change to the policy taking effect, measured with a
// TCP probe between two real pods (allow and deny, p50 and max).
//
//	go run ./bench/netpolbench -bin bin -policies 100 -pods 500      (as root; make deps build first)
package main
