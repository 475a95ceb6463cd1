// Command ipambench prints the IPAM benchmark table of issue 3 in one run: durable allocations
// per second, serial and from 64 concurrent allocators, and open + load of a database of
// 100,000 allocations, for edgeovn's SQLite IPAM side by side with host-local's disk store
// (containernetworking/plugins) as the peer, plus this machine's fsync floor.
//
//	go run ./bench/ipambench                  (about half a minute)
//	go run ./bench/ipambench -load 10000 -serial 500
//
// Everything is written under a temporary directory on the file system of -dir, which should
// be the disk the IPAM database lives on (fsync cost depends on it).
package main
