// Command failoverbench prints the controller failover figure of the README on the real rig:
// two edgeovn processes against one API server and northbound, the leader SIGKILLed while
// pods are being created, timed from the kill to the other host holding the Lease, to the
// next pod allocated, and to every pod allocated:
//
//	go run ./bench/failoverbench -bin bin -pods 200 -runs 3
//
// (as root, after `make deps build`). The lease timings default to edgeovn's own defaults.
package main
