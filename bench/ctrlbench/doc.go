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
// file. Each table prints the load average beside it: the machine is shared.
package main
