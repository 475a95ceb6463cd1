// Package config owns the daemon's configuration: Config, every option of the edgeovn
// binary (run, cleanup, status and doctor read the same one), its defaults (Default), its
// flags (AddFlags, flags.go), its validation (Validate, config.go and config_services.go),
// the TLS configuration of ssl: database endpoints (OVNTLS, tls.go) and the start-time check
// of the pod and join networks against this host's own networks (CheckHostNetworks,
// hostcheck.go). The YAML config file is read onto the same flags by the sub-package
// configfile, so the file and the flags cannot disagree.
//
// Invariants:
//   - Every option has one default, in Default; no consumer keeps a default of its own (a
//     zero value reaching a role is an error there, not a second default).
//   - Validate runs before the configuration is used: it fills the derived values
//     (ClusterGateway, masked prefixes) and reports every invalid option at once, each
//     error naming the option's flag and the value.
//   - Every field is bound to one flag (AddFlags), named as in the config file; repeatable
//     flags (ovn-nb, ovn-sb, service-cidr) replace their defaults on first use, then append.
//   - Durations are time.Duration, addresses and ranges netip.Addr and netip.Prefix.
//
// Config is a value: the daemon copies it into the roles' requests (package agent) and never
// changes it after Validate; nothing in this package runs concurrently or keeps state.
package config
