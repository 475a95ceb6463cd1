// Package ovnnat is the controller role's OVN NAT family, Kube-OVN's OVN-native EIP/FIP/SNAT
// (kubeovn.io/v1 OvnEip, OvnFip, OvnSnatRule, OvnDnatRule; field names, defaults and status
// unchanged):
//
//   - a custom Vpc with spec.enableExternal is linked to the external Subnet "external" (an
//     underlay Subnet) as Kube-OVN links it: an OvnEip "<vpc>-external" of type lrp holds the
//     address of the router port "<vpc>-external", whose gateway chassis are the hosts of
//     external-gw-nodes in the ConfigMap kube-system/ovn-external-gw-config (priority 100
//     for the first, 99 for the next, ...: OVN fails over by BFD), the switch gets
//     the port "external-<vpc>", and the router a default route to the Subnet's gateway
//     (rows owned by kind VpcExternal, so the Vpc's own sync leaves them alone); its
//     status.enableExternal says the link is applied (external.go);
//   - an OvnEip gets its address from edgeovn's IPAM in its external Subnet (owner
//     "ovn-eip:<name>", spec.v4Ip if set), and Kube-OVN's status; the IPAM reconcile at the
//     start of a term claims what the EIPs' status records (Claims) (eip.go);
//   - an OvnFip is one dnat_and_snat row, an OvnSnatRule one snat row, an OvnDnatRule one load
//     balancer (one VIP) in the router's load_balancer column, on the VPC's router, owned by
//     the object (fip.go, snat.go, dnat.go).
//
// Bad input (a missing or unready EIP, an EIP another FIP holds, an address outside the
// external Subnet or held by someone else, a pod port in another VPC than spec.vpc names, a
// VPC without the external link) is refused: conditions Validated/Ready False and Error True
// naming the field, and a Warning Event; rows applied before stay, other objects are
// untouched. Every object has the finalizer edgeovn.io/ovn-nat; deleting it removes exactly
// its rows (an EIP waits while a FIP or SNAT rule names it, then its address is released).
// Every sync compares before it writes: a restart or a new leader writes nothing when all is
// right, and Reconcile removes the rows of objects deleted while no controller ran.
//
// Pay only for what is used: the informers of OvnEip, OvnFip, OvnSnatRule and OvnDnatRule
// run only while one of them exists or a Vpc asks for enableExternal (gate.go): as a term
// starts Probe looks in the background (a list of one item per kind, the four at once), and
// Open, before the IPAM reconcile reads the EIPs, opens the gate on its answer or on a Vpc
// with enableExternal in the synced cache; while closed, a probe every ProbeEvery (or a Vpc's
// event) opens it; open and unused for two probes, it stops them. Closed, the stores are
// empty, which the probe found true.
//
// Concurrency: one worker processes keys "<kind>/<name>"; the listers are the term's shared
// informers' caches.
package ovnnat
