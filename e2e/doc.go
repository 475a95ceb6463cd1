// Package e2e is edgeovn's end-to-end suite: real ovsdb-server (NB, SB, Open_vSwitch),
// ovn-northd, ovs-vswitchd (userspace datapath), ovn-controller, etcd and kube-apiserver,
// started by the harness in their own network namespace and run directory; the edgeovn daemon
// built from this tree; pods as network namespaces wired through libcni, as containerd does,
// and, in TestRealNode, real pods run by a real kubelet and containerd 2 (harness.StartRealNode)
// from images built by e2e/images and imported without a registry.
// The tests skip with the reason when not root or when a component is missing
// (`make deps` installs them).
package e2e
