// Command restartbench prints the operations figures of the README on the real rig (OVN, OVS
// userspace datapath, kube-apiserver), with edgeovn supervised as systemd would supervise it
// (edgeovn.socket holding the CNI socket, READY=1 over NOTIFY_SOCKET):
//
//	go run ./bench/restartbench -bin bin -restarts 10   restarts: time to READY=1, lost pings,
//	                                                       failed ADDs/DELs, database writes
//	go run ./bench/restartbench -bin bin -drift 5       drift: each break, detected and repaired
//
// (as root, after `make deps build`).
package main
