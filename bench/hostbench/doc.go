// Command hostbench measures pod-to-pod latency and TCP throughput on the same host and across
// hosts (Geneve over the userspace datapath) on a harness.Cluster of two hosts, each running
// edgeovn, and prints a table. Same-host and cross-host runs alternate, round by round, so
// that the machine's load falls on both alike.
//
//	go run ./bench/hostbench -bin bin      (as root, after make deps build)
package main
