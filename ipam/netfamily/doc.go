// Package netfamily is the one validator of a network's address families: a list of prefixes
// in k3s's and Kube-OVN's comma form ("10.16.0.0/16,fd00:10:16::/64": one prefix, or one per
// family), its gateways (one per prefix, in the prefixes' order, each a host address of its
// prefix), and Kube-OVN's protocol derived from the families (IPv4, IPv6, Dual). The Subnet
// spec (agent/kubeovn), the daemon's flags (agent/config) and the northbound specs
// (ovn/northbound) all check through it, so they cannot disagree on what a network is.
//
// Invariants: pure functions of their arguments, no state; every error wraps ErrInvalid and
// names the field and the value it refuses.
package netfamily
