// Command demo runs edgeovn's main job on this host for a person to watch: OVN, etcd and a
// kube-apiserver in a private network namespace (the e2e harness, detached), the edgeovn
// daemon in it, and two pods as network namespaces wired through libcni. It prints their
// addresses and a ping, then leaves everything running; "demo down" tears it down.
package main
