package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// NodeBootTimes are the moments of a RealNode.Reboot the figures are measured from.
type NodeBootTimes struct {
	BootTimes
	UnitsUp      time.Time // the units booted before the node (edgeovn's) returned
	ContainerdUp time.Time // containerd answered
	KubeletUp    time.Time // the kubelet's healthz answered (its Node is registered already)
}

// Reboot is a power cut and boot of the host with its real node. At one moment every process
// the rig started (its daemons, edgeovn, containerd, the kubelet) and every process in the
// node's cgroup tree (containerd's shims, the pods' pause and containers, found by PID in the
// cgroups' procs files) is SIGKILLed; none runs a line of cleanup, so no CNI DEL is made.
// Then what lives on tmpfs or in the kernel on a real host is removed as a boot would not
// find it: the sandboxes' network namespaces (/run/netns/cni-*, by the inode the killed
// processes had; their veths go with them), the shims' sockets (/run/containerd/s), containerd's
// state dir (/run/containerd: task bundles, runc's state, rootfs and shm mounts, unmounted
// first) and sockets, the mounts under the kubelet's pods dir (its tmpfs volumes) and the pod
// cgroups; plus the rig's pid and control files and ovs-vswitchd's taps (Rig.Reboot). What is
// on disk stays: containerd's root (images, its sandbox and container records), the kubelet's
// root dir, libcni's result cache in /var/lib/cni. The boot then starts the rig's daemons in
// boot order, runs units once ovn-controller answers, beside etcd and the API server (the
// caller's units ordered after ovn-host and before k3s, as edgeovn's unit is), and, once both
// are up, starts containerd and the kubelet again, which find their pods' sandboxes dead and re-create them by
// themselves. Reboot returns once the kubelet answers.
func (n *RealNode) Reboot(ctx context.Context, units func(context.Context) error) (NodeBootTimes, error) {
	var bt NodeBootTimes
	cut, err := n.powerCut(ctx)
	if err != nil {
		return bt, fmt.Errorf("reboot node %s: %w", n.Name, err)
	}
	if err := n.clearVolatile(cut); err != nil {
		return bt, fmt.Errorf("reboot node %s: %w", n.Name, err)
	}
	if bt.BootTimes, err = n.rig.bootDaemons(ctx, cut.procs, units); err != nil {
		return bt, fmt.Errorf("reboot node %s: %w", n.Name, err)
	}
	bt.UnitsUp = time.Now()
	if err := n.startContainerd(ctx); err != nil {
		return bt, fmt.Errorf("reboot node %s: %w", n.Name, err)
	}
	bt.ContainerdUp = time.Now()
	if err := n.startKubelet(ctx); err != nil {
		return bt, fmt.Errorf("reboot node %s: %w", n.Name, err)
	}
	bt.KubeletUp = time.Now()
	n.rig.log.Info("real node rebooted", "node", n.Name, "took", bt.KubeletUp.Sub(bt.Start))
	return bt, nil
}

// cut is what a power cut leaves to clear: the rig's processes (to boot from), and what the
// node's killed processes held outside its dir.
type cut struct {
	procs  []*Process
	netns  map[uint64]bool // the sandboxes' network namespaces, by nsfs inode
	shimID []string        // the container IDs the killed shims served (their sockets)
}

// powerCut reads the node's processes from its cgroups (and what they hold) and kills them with
// the rig's at once; any process forked meanwhile (a shim starting runc) is killed too, until
// the cgroups are empty.
func (n *RealNode) powerCut(ctx context.Context) (cut, error) {
	c := cut{netns: map[uint64]bool{}}
	pids := cgroupPIDs(n.cgroup)
	notMine := map[uint64]bool{nsInode(n.rig.NetnsPath): true, nsInode("/proc/self/ns/net"): true}
	for i, cmd := range commands(pids) {
		if id := n.shimID(strings.Fields(cmd)); id != "" {
			c.shimID = append(c.shimID, id)
		}
		if ino := nsInode(fmt.Sprintf("/proc/%d/ns/net", pids[i])); ino != 0 && !notMine[ino] {
			c.netns[ino] = true
		}
	}
	n.rig.log.Info("power cut", "node", n.Name, "node_pids", len(pids), "shims", len(c.shimID), "sandbox_netns", len(c.netns))
	var err error
	if c.procs, err = n.rig.crash(ctx, pids); err != nil {
		return c, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for left := cgroupPIDs(n.cgroup); len(left) > 0; left = cgroupPIDs(n.cgroup) {
		if time.Now().After(deadline) {
			return c, fmt.Errorf("processes %v of node %s survived SIGKILL", left, n.Name)
		}
		for _, pid := range left {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(pollInterval)
	}
	return c, nil
}

// clearVolatile removes what a boot would not find (see Reboot), by inode and path.
func (n *RealNode) clearVolatile(c cut) error {
	errs := []error{n.removeNetns(c.netns)}
	for _, id := range c.shimID {
		if err := os.Remove(n.shimSocket(id)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	state := n.path("containerd", "state")
	errs = append(errs, unmountUnder(state), unmountUnder(n.path("kubelet", "pods")))
	if err := os.RemoveAll(state); err != nil {
		errs = append(errs, fmt.Errorf("remove containerd state %s: %w", state, err))
	}
	for _, sock := range []string{n.ContainerdSocket, n.ContainerdSocket + ".ttrpc"} {
		if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	// The pod cgroups: the node's root and the shims' are the boot's own ("/" on a real host).
	errs = append(errs, removeCgroupRoot(n.cgroup), createCgroups(n.cgroup, n.shimCgroup()))
	return errors.Join(errs...)
}
