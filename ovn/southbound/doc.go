// Package southbound reads the OVN southbound database: which chassis have registered and
// with which tunnel endpoints (`edgeovn doctor` checks that this host's ovn-controller did,
// with the encapsulation address edgeovn gave it), and which logical ports are bound to one
// chassis and up (BindingsOn: the node role's binding watch and doctor's "pod bindings").
// Connect monitors only the Chassis and Encap tables (package sbdb); Dial monitors nothing.
// Port_Binding is never monitored: BindingsOn selects, on the server, the rows whose chassis
// is the named one, and only their logical_port and up columns, so a node on a large cluster
// reads its own few rows, not the table. Its one write is DeleteChassis, the controller role's for a deleted
// node (as `ovn-sbctl chassis-del`): everything else in the southbound database is
// ovn-northd's and ovn-controller's.
package southbound
