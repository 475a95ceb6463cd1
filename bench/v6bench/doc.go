// Command v6bench measures TCP throughput (iperf3) over IPv6 against IPv4 in one dual-stack
// edgeovn on the real rig (OVN, OVS userspace datapath, kube-apiserver): pod to pod on one
// host, and pod to an "outside" namespace behind the host (masqueraded, each family by its
// own nftables table), the four paths alternating round by round so that each family sees
// the same load, and prints the medians and the IPv6/IPv4 ratio per path.
//
//	go run ./bench/v6bench -bin bin      (as root, after make build; needs iperf3)
package main
