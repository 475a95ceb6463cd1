// Command ctrlbench prints the controller role's figures of the README on the real rig (OVN,
// kube-apiserver, edgeovn from bin/), pods created as API objects on the rig's node:
//
//	go run ./bench/ctrlbench -bin bin -pods 500 -restart-pods 1000 -idle 60s
//
// (as root, after `make deps build`). In one run, on one rig: (a) -pods created at once, timed
// until every pod is annotated allocated and its northbound port exists, with each pod's time
// from create to annotated; then the namespace filled up to -restart-pods, and (c) the
// daemon's resident memory and its CPU over -idle with nothing happening; then (b) edgeovn
// SIGTERMed and started again with a new pod waiting, timed from the start to that pod
// annotated, with the northbound write transactions of the restart counted from the database
// file. With -compare-bin DIR (another build, e.g. the commit before a change) and -bgp, edgeovn
// is then started again from each build, and with a BGP neighbour, on the same pods, and the
// memory of each (RssAnon, RssFile, and that of its edgeovn-bgp child) printed beside the
// binaries' sizes:
//
//	go run ./bench/ctrlbench -bin bin -pods 0 -restart-pods 1000 -idle 10s -compare-bin /work/base/bin -bgp
//
// Each table prints the load average beside it: the machine is shared.
package main
