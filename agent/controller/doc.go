// Package controller is edgeovn's controller role. It runs only on the holder of the
// controller Lease: it owns the SQLite IPAM (no other process writes it), ensures the cluster
// topology in OVN northbound, turns Pods into addresses, logical switch ports and Kube-OVN
// annotations, and Nodes into join addresses (IPAM subnet "join"), join ports "node-<name>",
// the distributed gateway's router policies (a node's pods reach the outside through their
// own host) and Kube-OVN's node annotations, which the node role turns into ovn0.
//
// Invariants: before the first allocation, every pod that already carries an allocation is
// adopted into the IPAM, so a database that lost writes (a crash, a new leader) never hands an
// address out twice. A pod's port is created in OVN before its annotations say "allocated", so
// a node that sees the annotation can bind the port. A completed pod (Succeeded, Failed) holds
// nothing: its annotations are not a claim, its port is removed and its address released. Pods are processed by key through a rate
// limited work queue; one key is never processed by two workers at once.
package controller
