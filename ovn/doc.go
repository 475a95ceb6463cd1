// Package ovn holds what edgeovn's two OVSDB clients share: the ownership tags every row
// edgeovn creates carries (external_ids vendor=edgeovn, owner-kind, owner), the sentinel
// errors callers branch on, the connection helper and the checked transaction helper.
//
// Sub-packages: nbdb and vswitchdb are generated libovsdb models (do not edit; regenerate with
// modelgen -extended from schema/), northbound writes the OVN northbound topology (router,
// switches, pod ports), vswitch writes the host's Open_vSwitch database (bridge, ports, the
// ovn-controller settings) and waits for ovn-installed.
//
// Invariants: edgeovn changes or deletes only rows that carry VendorKey=Vendor; every write is
// one transaction per logical change whose every operation result is checked (Transact);
// ensures are idempotent and issue no write when the database already matches.
//
// Concurrency: a libovsdb client is safe for concurrent use. Connect uses one monitor per
// client and a reconnect backoff that never stops (libovsdb panics when it does).
package ovn
