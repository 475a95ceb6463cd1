// Command rebootbench prints the figures of a host reboot as kubelet lives it, on the real rig
// (OVN, OVS userspace datapath, etcd, kube-apiserver, edgeovn): N pods networked through
// libcni lose their network namespaces without a CNI DEL, every daemon of the host is
// SIGKILLed at once and started again in boot order (harness.Rig.Reboot), then, as soon as the
// API server answers a list of pods (a kubelet's informer's first list; its /readyz passes
// about a second later, printed with -steps), every sandbox is re-created at once (new
// namespace, new container ID, CNI ADD, retried as kubelet retries a failed one). For each
// size it prints the time from the first daemon's start, and from Open vSwitch answering, to
// every pod reaching its gateway and its neighbour; the pods that
// needed more than one ADD; and the pods unreachable 60 s after the daemons' start (each
// pod's gateway probed again then: a pod reached once may have been cut off since).
// Boot order puts etcd and kube-apiserver after Open vSwitch, and the bench starts edgeovn
// last: "edgeovn->all up", from edgeovn's start to every pod reachable, is edgeovn's share.
//
// With -steps the booted edgeovn runs at debug level and, after each size's line, the bench
// prints where the time went (phases.go): the boot's timeline from OVS up (each daemon
// answering, edgeovn ready, the burst, the first and last ADD answered, the last pod reaching
// its gateway and neighbour), each pod's phases and each ADD step edgeovn logs ("cni add
// step") as p50, p99 and max, and the CPU the machine and each daemon used from the burst to
// the last pod reachable.
//
// With -kubelet the host runs a real node (kubelet and containerd 2, harness.RealNode.Reboot)
// with a Deployment of N testserver pods: the power cut also kills containerd's shims and the
// pods, removes what is tmpfs on a real host, and boots with edgeovn before containerd and the
// kubelet, which re-creates the sandboxes itself. It prints the timeline from the first
// daemon's start: edgeovn ready, containerd and kubelet up, the booted edgeovn's first and last
// ADD, every pod Ready again (the API's view) and every pod answering the host and its
// neighbour (the network's view), and the pods not answering at 60 s.
//
//	go run ./bench/rebootbench -bin bin -pods 10,100,500   (as root, after `make deps build`)
//	go run ./bench/rebootbench -bin bin -pods 100 -steps
//	go run ./bench/rebootbench -bin bin -kubelet -pods 6,30
package main
