// Package vpcs is the controller role's Vpcs: it turns kubeovn.io/v1 Vpcs (cluster-scoped,
// Kube-OVN's field names) into logical routers of their own, named as the Vpc, with the
// static routes (staticRoutes: cidr, nextHopIP, policy policyDst/policySrc, ecmpMode,
// routeTable: OVN's route_table; a Subnet's spec.routeTable binds its router port to one,
// package subnets) and router
// policies (policyRoutes: priority, match, action allow/drop/reroute, nextHopIP) and peering
// ports (vpcPeerings: remoteVpc, localConnectIP; a route may use the peer's end) the spec
// asks for, and writes Kube-OVN's status (standby, router, defaultLogicalSwitch, subnets). It
// owns each Vpc's finalizer (edgeovn.io/vpc), status, and its rows in northbound (kind Vpc:
// the router, its routes and policies); the Subnets (package subnets) own their switches and
// router ports on it, create the router too when a Subnet of a new Vpc comes first (the same
// row), and choose a namespace's subnet from a Vpc's namespaces and defaultSubnet. It shares
// with the core only what its Request carries (the dynamic client, the northbound client,
// the event recorder, the logger, the metrics); its Vpc and Subnet informers are the term's
// (kubeapi.Informers.Dynamic).
//
// A Vpc's spec is validated whole before anything is written (sync.go): every field as
// Kube-OVN defines it (routes of one routeTable, policy and cidr are an ECMP group, one row
// per next hop; a next hop twice in a group or a group mixing ecmp_symmetric_reply with
// plain ECMP is refused), every policy match as OVN's parser would take it (package ovnmatch:
// northd drops a flow it cannot parse with a log line only), every next hop inside a
// validated Subnet of the VPC. A refused spec gets Validated/Ready False and Error True naming
// the field, and one Warning Event; the routes and policies applied before stay, and nothing
// else is touched. An accepted spec is written in one transaction that also removes the routes
// and policies the Vpc owns but no longer asks for; when everything is right nothing is
// written, so a restart writes nothing. A deleted Vpc is held by its finalizer while Subnets
// name it (Ready False, VpcInUse, naming them, as Kube-OVN waits for its subnets); then its
// rows go. Reconcile, at the start of a term, syncs every Vpc and removes the rows of Vpcs
// deleted while no controller ran. The default VPC (ovn-cluster, the cluster router, the core's)
// gets its status only; enableExternal, enableBfd, bfdPort and extraExternalSubnets are not
// implemented and named in the Unsupported condition.
//
// Concurrency: one worker syncs Vpcs; the listers are the informers' caches.
package vpcs
