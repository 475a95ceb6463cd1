// Command conformance runs the upstream Kubernetes v1.34 e2e tests that judge a pod network,
// the [sig-network] Conformance tests and the NetworkPolicy tests that apply to one node,
// against edgeovn on a small real cluster on this host (kube-apiserver, kube-controller-
// manager, kube-scheduler, a real kubelet and containerd, CoreDNS), once with kube-proxy
// (iptables, k3s's default) and once without (edgeovn serving Services through OVN load
// balancers), and prints a table: each spec, its outcome in each mode, and why it was
// skipped or how it failed. The images the tests run (agnhost, jessie-dnsutils, busybox,
// pause) are built from Go programs and imported under the names the framework asks for.
// With -stack dual the cluster is dual-stack in every part (k3s's dual-stack ranges: the API
// server's service ranges, the controller manager's node pod CIDRs, the kubelet's node IPs,
// kube-proxy, edgeovn, kube-dns) and the [Feature:IPv6DualStack] specs are selected too
// (stack.go); -num-nodes 2 tells e2e.test two nodes, so the checks that skip on one node only
// for want of a second run on the one.
//
//	go run ./e2e/cmd/conformance -bin bin      (as root; make conformance builds what it needs)
package main
