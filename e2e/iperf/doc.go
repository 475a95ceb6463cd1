// Package iperf runs iperf3 (Debian's) between two network namespaces and reads its JSON:
// the rate the receiver measured, over the whole run and per interval. Tests and bench
// commands share it; it starts the server for one test and stops it by its PID.
package iperf
