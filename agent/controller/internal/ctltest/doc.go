// Package ctltest holds the real parts the controller role's tests run on below e2e (Start):
// a real ovsdb-server with the northbound schema (package ovsdbtest) and edgeovn's client on
// it, the real SQLite IPAM in the test's temporary directory, a Kubernetes API client whose
// requests client-go's fake clientset serves (NewKube: gets, merge patches, creates, lists and
// watches, so the role's own kubeapi.Client and its informers run unchanged), a dynamic fake
// for the Subnets, and an Event recorder that keeps what was reported. Each part also reads
// back what a table test compares: the northbound rows edgeovn owns (NB.Rows, through
// ovn-nbctl, not through the code under test), the IPAM database's rows (IPAM.Rows, a
// read-only open of the file: what a restart would load), and the Events (Recorder.Check).
//
// It is imported only by tests (agent/controller and its sub-packages); nothing in it runs in
// the daemon. Everything a part starts is stopped by the test's cleanup, the ovsdb-server by
// its PID. Without root or the OVS tools the tests that use it skip saying so (fail under
// CI=true, package e2e/skip).
//
// Concurrency: a part belongs to one test; the recorder and the fake API may be called from
// any goroutine.
package ctltest
