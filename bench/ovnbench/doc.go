// Command ovnbench runs edgeovn's northbound benchmarks against ovsdb-servers it starts in
// temporary directories (never a system instance) and prints the results as a markdown
// table. It needs root and the OVS binaries, as the tests do. Each benchmark runs for about
// a second (testing's default benchtime), so one run takes well under a minute.
//
//	sudo go run ./bench/ovnbench [-ports 10000]
package main
