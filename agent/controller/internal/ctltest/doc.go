// Package ctltest holds the real parts the controller role's tests run on below e2e: a real
// ovsdb-server with the northbound schema (package ovsdbtest) and edgeovn's client on it, the
// real SQLite IPAM in the test's temporary directory, a Kubernetes API client whose requests
// are served by client-go's fake clientset (its object tracker applies the role's merge
// patches as the API server would), and an Event recorder that keeps what was reported.
// Each part also reads back what a test compares: the northbound rows edgeovn owns (through
// ovn-nbctl, not through the code under test), the IPAM database's rows (a read-only open of
// the file), the objects' annotations and the Events.
//
// It is imported only by tests (agent/controller and its sub-packages); nothing in it runs in
// the daemon. Everything a part starts is stopped by the test's cleanup.
//
// Concurrency: a part belongs to one test; the recorder may be called from any goroutine.
package ctltest
