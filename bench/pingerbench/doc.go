// Command pingerbench measures the pinger's own cost: CPU time per round and the process's
// RSS with N pod targets (and a host target per 100 pods), as `edgeovn status` and /metrics
// would show them. The targets are addresses of 127.0.0.0/8, which the kernel answers on
// loopback: what is measured is the pinger (one raw socket, target sampling, metrics), not a
// network. Run as root (raw ICMP socket):
//
//	go run ./bench/pingerbench -pods 1000 -rounds 5
package main
