// Package ovsdbtest starts throwaway ovsdb-servers for the tests and benchmarks of any package
// (it is not internal, so controller and e2e-adjacent tests can use a real database instead of
// a fake): a real ovsdb-server per test. It owns each server's lifetime and files: a standalone
// server (Start) with its own temporary directory, database file, unix socket and loopback TCP
// port, which can be stopped and restarted on the same file and socket (Stop, Restart) or
// frozen with SIGSTOP (Pause, Resume); and a raft cluster on loopback TCP (StartCluster) whose
// members can be killed by PID. Servers run as child processes that are waited for and
// stopped by PID (never by name) when the test ends; nothing touches a system instance. Tests
// that use it are skipped with a clear message when not run as root or when the OVS binaries
// are missing.
//
// Concurrency: a Server or Cluster belongs to one test goroutine.
package ovsdbtest
