// Package daemon runs the edgeovn binary inside a harness rig, configured the way the rig
// needs (its OVSDB sockets, kubeconfig and CNI directories), for the e2e suite, the demo and
// the bench commands alike, with a podsim kubelet wired to the same directories.
package daemon
