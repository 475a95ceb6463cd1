// Package annotation reads and writes the pod annotations Kube-OVN users already know
// (ovn.kubernetes.io/ip_address, mac_address, cidr, gateway, logical_switch, allocated, routed).
//
// The controller role writes them once a pod's address and logical switch port exist; the node
// role reads them to wire the pod. Dual-stack values are comma-joined on the wire because that
// is Kube-OVN's format; inside edgeovn they are always slices of netip values. A user-set
// ip_address, mac_address or logical_switch on a pod that is not yet allocated pins it.
// PortName is the other convention both roles share: a pod's port is "<pod>.<namespace>".
// The package is pure: no client-go, no I/O.
package annotation
