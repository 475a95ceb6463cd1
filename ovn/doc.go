// Package ovn holds what edgeovn's two OVSDB clients share: the ownership tags every row
// edgeovn creates carries (external_ids vendor=edgeovn, owner-kind, owner), the sentinel
// errors callers branch on, the connection helper (reconnect forever, leader-only with several
// endpoints, the members that answer a probe tried first and each first-connect attempt bounded,
// so a member whose host died never holds a connect; an Echo watchdog for TCP/SSL endpoints), the checked transaction helper and the
// per-client transaction metrics (Metrics, Stats; slow transactions are logged).
//
// Sub-packages: nbdb and vswitchdb are generated libovsdb models (do not edit; regenerate with
// modelgen -extended from schema/), northbound writes the OVN northbound topology (router,
// switches, pod ports), vswitch writes the host's Open_vSwitch database (bridge, ports, the
// ovn-controller settings) and waits for ovn-installed. ovsdbtest starts throwaway servers
// and raft clusters for any package's tests; nbbench holds the benchmarks that both
// `go test -bench` and bench/ovnbench run.
//
// libovsdb logs through the injected slog handler at Info and above; its failed reconnect
// attempts, expected while a server restarts or a raft leader changes, arrive as WARN, not
// ERROR (connect.go).
//
// Invariants: edgeovn changes or deletes only rows that carry VendorKey=Vendor; every write is
// one transaction per logical change whose every operation result is checked (Transact);
// ensures are idempotent and issue no write when the database already matches.
//
// Concurrency: a libovsdb client is safe for concurrent use. Connect uses one monitor per
// client (Dial none: its client only transacts) and a reconnect backoff that never stops (libovsdb panics when it does). The
// watchdog is one goroutine per TCP/SSL client, stopped by the client's Close. Metrics is
// safe for concurrent use.
package ovn
