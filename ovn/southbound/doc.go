// Package southbound reads the OVN southbound database: which chassis have registered and
// with which tunnel endpoints (`edgeovn doctor` checks that this host's ovn-controller did,
// with the encapsulation address edgeovn gave it). It monitors only the Chassis and Encap
// tables (package sbdb). Its one write is DeleteChassis, the controller role's for a deleted
// node (as `ovn-sbctl chassis-del`): everything else in the southbound database is
// ovn-northd's and ovn-controller's.
package southbound
