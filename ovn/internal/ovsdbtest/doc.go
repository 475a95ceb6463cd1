// Package ovsdbtest starts a throwaway ovsdb-server for tests of the ovn packages: its own
// temporary directory, database file and unix socket, run as a child process and stopped by
// PID when the test ends. It never touches a system instance. Tests that use it are skipped
// with a clear message when not run as root or when the OVS binaries are missing.
package ovsdbtest
