// Package benchkit is what edgeovn's bench commands (bench/*) share: the -bin flag, clients
// of a rig fast enough not to be what is measured, pings between pods (warm-up and round
// trips), TCP probes timing a policy's change to effect (ProbeUntil, ProbeOpened), a
// process's CPU time, the machine's load average, and the percentiles and formatting of
// their tables.
// iperf3 runs are package e2e/iperf's.
// It measures nothing itself and holds no state beyond the clients it returns.
package benchkit
