// Command podbench measures pod create to Running through a real node (kubelet v1.34 and
// containerd 2 with runc, harness.StartRealNode) for N pods created at once, with edgeovn as
// the network and, in the same run on the same node, with the reference bridge + host-local
// plugins, in rounds that alternate which network goes first (each switch is followed by an
// untimed canary pod); then restarts edgeovn a few times and times the node back to Ready. It
// prints tables.
//
//	go run ./bench/podbench -bin bin -pods 50      (as root; make deps build first)
package main
