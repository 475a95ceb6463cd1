// Package inspect reads the state of edgeovn on this host for a person at a shell: `edgeovn
// status` (role, the Lease holder, subnets and their usage, the databases' connection state,
// this node's readiness, the pinger's last round) and `edgeovn doctor` (each check a person would do by hand, with how
// to fix what fails).
//
// Invariants: nothing here writes. The OVSDB clients only read their caches (and the
// southbound's selects of this chassis's Port_Bindings, for "pod bindings"), the IPAM
// database is opened read-only, the Kubernetes API is only read, and the daemon is asked only
// for CNI STATUS and GET /readyz, /controller and /pinger. Every check and connection has a deadline, so a dead
// database makes a check fail rather than the command hang; a check whose inputs are missing
// (no IPAM database on a host that does not lead) is skipped and says why, never passed.
//
// Concurrency: a Host is used by one goroutine; its clients connect on first use.
package inspect
