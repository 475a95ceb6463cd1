// Package config owns the daemon's configuration: Config, every option of the edgeovn
// binary (run, cleanup, status and doctor read the same one), its defaults (Default), its
// flags (AddFlags, flags.go), its validation (Validate, config.go and config_services.go),
// the TLS configuration of ssl: database endpoints (OVNTLS, tls.go) and the check of the pod
// and join networks against this host's networks (CheckHostNetworks, hostcheck.go; the
// daemon reads the networks and calls it before anything starts). The YAML config file is
// read onto the same flags by the sub-package configfile, so the file and the flags cannot
// disagree.
//
// The roles' options are Config's embedded parts (roles.go): Cluster (both roles), Node (the
// node role) and Controller (the controller role). node.Request and controller.Request embed
// them and package agent hands them down whole, so an option added to a part reaches its role
// without a line copying it. An option of Config outside the parts is the daemon's own
// (kubeconfig, TLS files, Lease, metrics, memory limit).
// The BGP speaker's options (bgp.go) are Node's embedded BGP, named as Kube-OVN's speaker
// flags; with no neighbour (BGP.Enabled false) nothing of them is used.
//
// Invariants:
//   - Every option has one default, in Default; no consumer keeps a default of its own (a
//     zero value reaching a role is an error there, as controller.Run's Workers, not a
//     second default).
//   - Validate runs before the configuration is used: it fills the derived values
//     (ClusterGateway, masked prefixes) and reports every invalid option at once, each
//     error naming the option's flag and the value.
//   - Every field is bound to one flag (AddFlags), named as in the config file; repeatable
//     flags (ovn-nb, ovn-sb, service-cidr) replace their defaults on first use, then append.
//   - Durations are time.Duration, addresses and ranges netip.Addr and netip.Prefix. Dual
//     stack is two fields (ClusterCIDR and ClusterCIDRDual, JoinCIDR and JoinCIDRDual,
//     ClusterGateway and ClusterGatewayDual), the first IPv4 when there are two; the flags and
//     the file take k3s's form "10.42.0.0/16,2001:cafe:42::/56" (dualstack.go), at most one
//     prefix per family. The join network has the cluster's families (an IPv6 join,
//     fd00:100:64::/112, is taken only when the cluster has IPv6); an IPv6 pod or join prefix
//     longer than /120 is refused.
//
// Config is a value: nothing changes it after Validate, nothing in this package runs
// concurrently, keeps state or reads the host (OVNTLS reads the certificate files it names).
package config
