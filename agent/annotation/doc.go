// Package annotation reads and writes the pod annotations Kube-OVN users already know
// (ovn.kubernetes.io/ip_address, mac_address, cidr, gateway, logical_switch, allocated, routed,
// ip_pool).
//
// The controller role writes them once a pod's address and logical switch port exist; the node
// role reads them to wire the pod. Dual-stack values are comma-joined on the wire because that
// is Kube-OVN's format; inside edgeovn they are always slices of netip values. A user-set
// ip_address, mac_address or logical_switch on a pod that is not yet allocated pins it; so does
// ip_pool (pool.go), read in Kube-OVN's forms: addresses separated by ',', or dual-stack
// entries ("v4,v6") separated by ';' (a lone pair of different families is one entry), or the
// name of an IPPool object; ip_address takes precedence over ip_pool, as in Kube-OVN. Bad
// values are errors that name the annotation and the bad part.
// PortName is the other convention both roles share: a pod's port is "<pod>.<namespace>"; and
// NodeInternalIP, the node address both read (its first IPv4 InternalIP). Each node role
// writes edgeovn.io/host-networks (the networks its interfaces are on, a JSON list of CIDRs)
// and edgeovn.io/route-conflicts on its own Node (hostnet.go); the controller checks Subnets
// against the former (bad entries are skipped, never refusing anything). The controller writes
// edgeovn.io/network-error on a pod whose networks it cannot allocate, and removes it once it
// has; the node fails the pod's CNI ADD with it (networkerror.go).
// The package is pure: API types only, no client-go, no I/O.
package annotation
