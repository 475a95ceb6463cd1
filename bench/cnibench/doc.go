// Command cnibench measures CNI ADD and DEL latency as a runtime sees it (libcni, plugin exec
// included) for edgeovn on the real rig (OVN, OVS userspace datapath, kube-apiserver), side by
// side with the reference bridge + host-local plugins on the same host, and prints a table.
//
//	go run ./bench/cnibench -bin bin -pods 20      (as root; make deps first)
//	go run ./bench/cnibench -bin bin -pods 40 -dual (dual-stack pods against IPv4-only ones, one edgeovn)
//	go run ./bench/cnibench -bin bin -pods 40 -vpc  (pods of a custom VPC against the default VPC's, one edgeovn)
package main
