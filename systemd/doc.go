// Package systemd is edgeovn's glue to systemd: readiness and stopping notifications and the
// watchdog keep-alive of a Type=notify unit, socket activation (ActivatedListener: the CNI
// socket edgeovn.socket holds across restarts), and the unit files themselves (edgeovn.service,
// edgeovn.socket).
// Health turns the node's readiness verdicts into READY=1 (the first time) and STATUS= (every
// change); Watchdog sends keep-alives only while its alive function passes.
//
// Every call is a no-op when the process was not started by systemd (no NOTIFY_SOCKET, no
// LISTEN_FDS), so the daemon runs the same way under a test harness, a shell or a unit; the
// e2e harness plays systemd's part of both protocols for the restart tests.
package systemd
