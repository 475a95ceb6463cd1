// Package podsim plays kubelet for the end-to-end suite and the demo: it registers a Node,
// creates Pods bound to it through the real API server, gives each pod sandbox a network
// namespace, and calls the CNI plugin through libcni exactly as containerd does (ADD on eth0
// with the K8S_POD_* arguments, DEL possibly repeated). It also probes the result: addresses
// inside the namespace, ping, and a TCP exchange (which catches checksum-offload faults that
// ping does not), and WaitReachable / ReachAll: when each pod first reached its gateway and
// a neighbour, probed from all pods at once.
package podsim
