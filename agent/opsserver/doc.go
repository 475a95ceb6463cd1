// Package opsserver serves the daemon's operations endpoints over HTTP on a local address
// (config metrics-address, default 127.0.0.1:10665): /metrics (Prometheus), /healthz (the
// process is alive: what the systemd watchdog is fed on), /readyz (this node's datapath can
// take pods: the same live verdict as CNI STATUS) and /controller (this host's controller
// state, leader, candidate or ineligible, with the reason it does not campaign, which
// `edgeovn status` prints) and /pinger (the pinger's last round, 404 while it is off, also
// printed by `edgeovn status`), and /bgp (the BGP speaker's peers and announced prefixes, 404
// on a host without a speaker, printed by `edgeovn status`).
//
// Invariants: /healthz and /readyz answer 200 "ok" or 503 with the reason, evaluated on each
// request, never from a cached flag; a GET is all they take. Nothing here changes state.
package opsserver
