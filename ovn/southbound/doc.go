// Package southbound reads the OVN southbound database: which chassis have registered and
// with which tunnel endpoints (`edgeovn doctor` checks that this host's ovn-controller did,
// with the encapsulation address edgeovn gave it). It monitors only the Chassis and Encap
// tables (package sbdb) and never writes: the southbound database is ovn-northd's and
// ovn-controller's.
package southbound
