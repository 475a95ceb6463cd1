// Package controller is edgeovn's controller role. It runs only on the holder of the
// controller Lease: it owns the SQLite IPAM (no other process writes it), ensures the cluster
// topology in OVN northbound, turns Pods into addresses, logical switch ports and Kube-OVN
// annotations, and Nodes into join addresses (IPAM subnet "join"), join ports "node-<name>",
// the distributed gateway's router policies (a node's pods reach the outside through their
// own host) and Kube-OVN's node annotations, which the node role turns into ovn0. A deleted
// node's rows go, its chassis is removed from the southbound (the other hosts drop their
// tunnels to it) and its join address is released.
//
// The rest of the role is cut into sub-packages, each owning its state and getting what it
// shares with the core in a Request of its own, never the Controller: subnets (kubeovn.io/v1
// Subnets: IPAM subnets, switches, isolation ACLs, status, a pod's subnet; applied before the
// pods are reconciled), and the features with informers of their own that run in the same
// term (feature.go, enabled.go): services (Services as OVN load balancers) and policies
// (NetworkPolicies as port groups, address sets and ACLs, translated by agent/netpol), and
// vpcs (kubeovn.io/v1 Vpcs as routers of their own with static routes and policies). Two
// leaf packages serve them all: queue (the work queues and the worker loop) and podnet (which
// pods are wired, and which subnets a pod may hold an address in). Each says in its doc.go
// what it owns.
//
// Pins (pool.go): a pod's ip_address, or else its ovn.kubernetes.io/ip_pool, is checked whole
// against the pod's own subnet before anything is taken (ipam.CheckStatic: another subnet's
// address, the join network's, the gateway, an excluded range or a network address are
// refused with an AllocationFailed Event naming the address and why, and wait for the pod to
// change). A pool pod takes the first entry no other pod holds; a StatefulSet's pod the entry
// at its ordinal, as in Kube-OVN. All held: an IPPoolExhausted Event naming the pool and the
// holders; the pod is retried with backoff and queued at once by the next release (waiters).
// An ip_pool naming an IPPool object is refused: edgeovn has no IPPool resource.
//
// StatefulSets (statefulset.go): a StatefulSet's pod gets a port marked with its StatefulSet
// (name/uid, in northbound). When the pod is deleted (or completes), its port and allocation
// stay while that StatefulSet (same uid) exists, is not being deleted and counts the pod's
// ordinal among its replicas; the pod re-created with the same name gets the same address and
// MAC. A StatefulSet informer (slimmed to name, namespace, uid, deletion time, replicas and
// start ordinal) queues a StatefulSet deleted, re-created or scaled, whose handler queues its
// gone pods, whose sync releases what it no longer wants. The mark being in northbound, a
// restart or a new leader keeps the kept addresses (reconcile claims them, newest, so a live
// pod wins a conflict and the kept port goes) and releases those of StatefulSets deleted
// meanwhile.
//
// Attachment networks (attach.go): a pod's k8s.v1.cni.cncf.io/networks selects Multus
// NetworkAttachmentDefinitions (read on demand with the dynamic client, never watched; the CRD
// is Multus's, edgeovn installs nothing). Each NAD of type kube-ovn gets, as in Kube-OVN, an
// address in the Subnet whose spec.provider is "<nad>.<namespace>.ovn" (or the Subnet its
// "<provider>.kubernetes.io/logical_switch" names), a port "<pod>.<namespace>.<provider>"
// (external_ids provider=<provider>) and the annotations "<provider>.kubernetes.io/...". Its
// IPAM owner is "<namespace>/<pod>@<provider>", the primary's "@eth0": one pod, several
// owners, all released with the pod. The attachments are resolved and their pinned addresses
// checked before anything is allocated for a new pod: a missing NAD, a NAD no Subnet serves
// (both retried with backoff), a malformed selection, one interface name twice or a static
// address outside the attachment's Subnet (both wait for the pod to change) get an
// AttachmentFailed Event naming the attachment and leave nothing allocated; the same reason
// goes on the pod as edgeovn.io/network-error, so its node fails the CNI ADD with it at once,
// and is removed when the pod's networks resolve, before anything is allocated (networkerror.go). Reconcile claims
// every "<provider>.kubernetes.io/allocated" attachment like the primary (a conflict there
// removes only that attachment's port), and adopts attachment ports no annotation names.
// v1.multus-cni.io/default-network naming a kube-ovn NAD puts the pod's primary allocation on
// the Subnet of that NAD's provider (defaultnet.go; a logical_switch annotation still wins); a
// missing NAD or Subnet waits with an AttachmentFailed Event; another plugin's network gets a
// DefaultNetworkUnsupported Event and the namespace's Subnet. Pods of an underlay Subnet
// without logicalGateway are kept out of the nodes' address sets (their traffic leaves
// through the site's router, not their host).
//
// Invariants: before the first allocation, every pod that already carries an allocation is
// adopted into the IPAM, so a database that lost writes (a crash, a new leader) never hands an
// address out twice; so is the address of every edgeovn pod port whose live pod carries no
// allocation yet (a controller that died between creating the port and annotating the pod),
// which stays that pod's. A live pod whose annotated address an older pod's claim wins loses
// the port an earlier term gave it (an AddressConflict Event), so OVN never holds one address
// on two ports. Ports of pods gone or completed are removed and their addresses
// released behind every never-used one, unless their StatefulSet keeps them (above). A pod's port is created in OVN before its annotations say "allocated", so
// a node that sees the annotation can bind the port. A completed pod (Succeeded, Failed) holds
// nothing: its annotations are not a claim, its port is removed and its address released. Pods are processed by key through a rate
// limited work queue; one key is never processed by two workers at once. The queue hands out
// the pods that await their allocation before every other key (package queue): a new pod waits
// behind other new pods only, never behind the re-syncs of allocated pods that a restart's
// initial lists, or a burst's own annotation updates, queue first.
package controller
