// Package controller is edgeovn's controller role. It runs only on the holder of the
// controller Lease: it owns the SQLite IPAM (no other process writes it), ensures the cluster
// topology in OVN northbound, turns Pods into addresses, logical switch ports and Kube-OVN
// annotations, and Nodes into join addresses (IPAM subnet "join"), join ports "node-<name>",
// the distributed gateway's router policies (a node's pods reach the outside through their
// own host) and Kube-OVN's node annotations, which the node role turns into ovn0. A deleted
// node's rows go, its chassis is removed from the southbound (the other hosts drop their
// tunnels to it) and its join address is released.
//
// Features with informers of their own run in the same term (feature.go). The network-policy
// feature (netpol*.go) syncs one namespace at a time: package netpol translates the namespace's
// NetworkPolicies against a snapshot of the listers into port groups, address sets and ACLs,
// and northbound.EnsureACLGroup applies each policy's rows (one transaction per policy), then
// the namespace's default-deny groups, then deletes the rows of its policies that are gone, so
// an allowed connection is never cut by an update; a sync that wrote anything ends with
// northbound.BumpNBCfg, on whose report the nodes purge their userspace datapath's flow cache
// (agent/node, flowcache.go). Any pod or namespace change that a translation reads queues every
// namespace with policies (namespace selectors reach across namespaces); unchanged rows cost no
// write. Its reconcile also deletes the rows of policies deleted while no controller ran. What
// OVN cannot express is reported once per change as a Warning Event (PolicyUnsupported) on the
// policy. With --network-policy=false, edgeovn's policy rows are deleted at the start of the
// term.
//
// Subnets (subnets.go, subnet_*.go, namespaces.go): at the start of a term the role installs
// the kubeovn.io/v1 Subnet CRD when the cluster has none and creates the ovn-default and join
// Subnet objects from the configuration when missing. Every Subnet is applied before the pods
// are reconciled (their claims name subnets the IPAM must know): its network (package kubeovn
// parses cidrBlock, gateway, excludeIps, protocol) becomes an IPAM subnet, a logical switch with
// its router port on the cluster router, an allow policy that keeps traffic to it off the
// distributed gateway's reroutes, the Services' load balancer group, and, for a private Subnet,
// the isolation ACLs on its switch (subnet_private.go, package subnetacl; owned by the Subnet,
// removed when private is turned off, announced with nb_cfg like a policy change; an invalid
// allowSubnets entry refuses the spec like any other invalid field). A Subnet that does not
// parse, overlaps another (the one applied first, in this term or an earlier one, keeps its
// CIDR), changes its CIDR, or overlaps a special range, a Service CIDR, a Node's InternalIP or
// ExternalIP, or a network a host's interfaces are on (each node role's edgeovn.io/host-networks;
// CIDRReserved, package subnetcheck; a change of a Node's addresses or networks checks every
// Subnet again) is refused: Validated/Ready False and Error True with the reason naming both
// sides, and a Warning Event; what was applied stays. Status: Kube-OVN's conditions, edgeovn's
// Unsupported naming each spec field it does not implement, and the v4/v6 used and available
// counts (written at most once a second per subnet while pods come and go). A deleted Subnet is
// held by the finalizer edgeovn.io/subnet while pods hold addresses in it (Ready False,
// SubnetInUse, naming them); its last pod's release lets it go with its rows and IPAM subnet. A
// pod's subnet: its ovn.kubernetes.io/logical_switch annotation, else the Subnets whose
// spec.namespaces lists its namespace, else a logical_switch a person set on the namespace, else
// the default (a Subnet marked default, the oldest, else ovn-default); namespaces get Kube-OVN's
// annotations of their subnets (logical_switch, cidr, exclude_ips).
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
// Invariants: before the first allocation, every pod that already carries an allocation is
// adopted into the IPAM, so a database that lost writes (a crash, a new leader) never hands an
// address out twice; so is the address of every edgeovn pod port whose live pod carries no
// allocation yet (a controller that died between creating the port and annotating the pod),
// which stays that pod's. Ports of pods gone or completed are removed and their addresses
// released behind every never-used one, unless their StatefulSet keeps them (above). A pod's port is created in OVN before its annotations say "allocated", so
// a node that sees the annotation can bind the port. A completed pod (Succeeded, Failed) holds
// nothing: its annotations are not a claim, its port is removed and its address released. Pods are processed by key through a rate
// limited work queue; one key is never processed by two workers at once. The queue hands out
// the pods that await their allocation before every other key (queue.go): a new pod waits
// behind other new pods only, never behind the re-syncs of allocated pods that a restart's
// initial lists, or a burst's own annotation updates, queue first.
package controller
