// Package nbbench holds the northbound benchmarks, so that both `go test -bench` (in
// package northbound's tests) and bench/ovnbench run the same code. Each benchmark
// starts its own ovsdb-server through ovsdbtest and stops it by PID when it ends.
//
// Concurrency: the benchmarks are sequential; run one at a time.
package nbbench
