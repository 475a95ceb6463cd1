// Package harness is the real-component rig of the end-to-end suite and the demo: one
// simulated host in its own network namespace, running the OVN central (NB and SB
// ovsdb-servers, ovn-northd), the host's Open vSwitch (ovsdb-server with the Open_vSwitch DB,
// ovs-vswitchd on the userspace datapath) and ovn-controller, plus etcd and a real
// kube-apiserver.
//
// Ownership: a Rig owns its run directory (sockets, databases, pid files, logs, kubeconfig),
// its network namespace and every process it started, including extra ones started with
// Rig.Start (edgeovn itself). It never touches a system instance: every daemon gets explicit
// socket, pid, log and control paths inside the run directory, and OVS_RUNDIR/OVN_RUNDIR point
// there too.
//
// Invariants:
//   - The rig does not configure the chassis (system-id, ovn-remote, encap, datapath type):
//     that is edgeovn's node role's job. It exposes the endpoints edgeovn must be told.
//   - Every process is a direct child run without --detach and is stopped by PID, in reverse
//     start order, and waited for. With Options.Detach the children get their own session so
//     they outlive the starting program; their PIDs (with start times, against PID reuse) are
//     in <dir>/pids and StopDir tears them down from another program.
//   - Ports are fixed (etcd 2379/2380, API server 6443) because they live in the rig's own
//     network namespace, where nothing else listens: several rigs never collide.
//   - The test process stays in the root namespace; RESTConfig and DialContext open their
//     sockets inside the rig's namespace from a locked OS thread, since a socket keeps the
//     namespace it was created in.
//
// A real node (StartRealNode) adds a kubelet and containerd 2 with Debian's runc in the rig's
// network namespace. They run in this machine's mount namespace (nsenter --net), so that the
// sandbox namespaces containerd mounts in /run/netns reach edgeovn; the kubelet gets a private
// copy of it in which the host sysctls it would otherwise set (kernel.panic, ...) read as it
// wants them, so the shared host keeps its own. Everything else is the node's: containerd's
// root, state and sockets, the kubelet's root, certs and logs under <dir>/node-<name>, and a
// cgroup tree /<netns>-<name> for the pods and containerd's shims. Outside it, containerd
// writes only what is keyed by container ID: libcni's result cache in /var/lib/cni, shim
// sockets in /run/containerd/s and the sandboxes' /run/netns/cni-* namespaces, all removed as
// the pods stop. A real node is torn down first in Close, while edgeovn still answers the CNI
// DELs: pods deleted through the API and waited for, then kubelet and containerd stopped by
// PID, then any process left in its cgroups killed by PID.
//
// A Cluster (StartCluster) is several simulated hosts: a central Rig (OVN NB and SB on TCP,
// ovn-northd, etcd, kube-apiserver) and one Rig per host (its Open_vSwitch database,
// ovs-vswitchd on the userspace datapath and ovn-controller, with its own run directory as
// OVS_RUNDIR and OVN_RUNDIR), each in its own network namespace, joined by a Linux bridge in
// another namespace (203.0.113.0/24). A host's underlay address is on br-phy, an OVS netdev
// bridge whose port is the host's veth leg (userspace Geneve routes its tunnels only through
// such a bridge), with arp_ignore=1; the central's leg has TX checksum offload off, since
// OVS reads its packets on the hosts. A host Rig's endpoints are the central's on TCP, its
// Kube() the central's clientset; edgeovn runs in it as in a single rig (daemon.Start).
// Close stops the hosts, then the central, each by PID, then deletes the underlay.
//
// With ClusterOptions.Databases = RaftDBs the central runs only etcd and kube-apiserver, and
// NB and SB are each an ovsdb-server raft cluster over the first RaftMembers hosts (default
// 3): the first member's file made with `ovsdb-tool create-cluster`, the others' with
// `join-cluster` through it, raft on the members' underlay addresses (ports 6643, 6644),
// clients on 6641 and 6642, and ovn-northd on every member pointed at both member lists. Every
// host's, and the central's, NBEndpoint and SBEndpoint are then the members' comma-separated
// TCP list (ovn-nbctl's --db form; SplitEndpoints gives edgeovn's flags). A killed member's
// server restarts from its file with RestartDaemon and rejoins; AddHost adds a host that is
// never a member.
//
// Reboot is a host crash and boot: every process of the rig (edgeovn too) SIGKILLed by PID at
// once and reaped, pid and control files removed, the rig's own daemons started again in boot
// order from their database files (OVN central, Open vSwitch, ovn-controller, etcd,
// kube-apiserver, then kube-controller-manager and kube-scheduler if the test started them); the
// test starts edgeovn again. A raft member cannot reboot alone. RealNode.Reboot is the same
// power cut for a rig with a real node: the processes in the node's cgroup tree (shims, pause,
// containers) are SIGKILLed in the same instant, by PID; what is tmpfs or kernel state on a real
// host is removed (the sandboxes' /run/netns entries, without a CNI DEL, the shims' sockets,
// containerd's state dir with runc's state and its rootfs and shm mounts, the kubelet's volume
// mounts, the pod cgroups); what is on disk stays (containerd's root, the kubelet's root dir,
// libcni's cache); the boot runs the rig's daemons, the caller's units (edgeovn), then
// containerd and the kubelet, which re-creates the sandboxes itself.
//
// A Site's router namespace can run a private FRR (StartFRR, frr.go): Debian's zebra and bgpd
// started by hand as the frr user with their config, pid files, vty and zserv sockets and logs
// in the test's directory, children of the site's rig stopped by PID; never the system service.
//
// Concurrency: a Rig's methods may be called from several goroutines; Stop is idempotent and
// safe to call after a failed or partial start.
package harness
