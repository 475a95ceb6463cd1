package harness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sweep removes what a node left after its kubelet and containerd stopped: every process in
// its cgroup tree (shims, containers: none after a clean drain), the network namespaces those
// processes held that are still mounted in /run/netns, every mount under the node's dir, and
// its cgroups. Everything is found by PID, inode or path, never by name.
func (n *RealNode) sweep(inv inventory) error {
	var errs []error
	pids := cgroupPIDs(n.cgroup)
	var shimIDs []string
	if len(pids) > 0 {
		cmds := commands(pids)
		n.rig.log.Warn("real node: killing processes left in its cgroups", "node", n.Name, "pids", pids, "commands", cmds)
		for _, c := range cmds {
			if id := n.shimID(strings.Fields(c)); id != "" {
				shimIDs = append(shimIDs, id)
			}
		}
	}
	// The sandboxes' namespaces, which the pause processes hold; the shims run in the rig's
	// (containerd's), which is not the node's to remove.
	netns := map[uint64]bool{}
	notMine := map[uint64]bool{nsInode(n.rig.NetnsPath): true, nsInode("/proc/self/ns/net"): true}
	for _, pid := range pids {
		if ino := nsInode(fmt.Sprintf("/proc/%d/ns/net", pid)); ino != 0 && !notMine[ino] {
			netns[ino] = true
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill %d of node %s: %w", pid, n.Name, err))
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(cgroupPIDs(n.cgroup)) > 0 && time.Now().Before(deadline) {
		time.Sleep(pollInterval)
	}
	if left := cgroupPIDs(n.cgroup); len(left) > 0 {
		errs = append(errs, fmt.Errorf("node %s: processes %v survived SIGKILL", n.Name, left))
	}
	errs = append(errs, n.removeNetns(netns), n.removeByPath(inv, shimIDs), unmountUnder(n.Dir), removeCgroupRoot(n.cgroup))
	return errors.Join(errs...)
}

// commands names each process (for the log).
func commands(pids []int) []string {
	var out []string
	for _, pid := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " "))
	}
	return out
}

// nsInode is the inode of a namespace file, 0 when it cannot be read.
func nsInode(path string) uint64 {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0
	}
	return st.Ino
}

// sandboxNetnsPrefix starts the names containerd gives the sandboxes' namespaces in /run/netns.
const sandboxNetnsPrefix = "cni-"

// removeNetns unmounts and removes the sandbox entries of /run/netns that are one of the
// given namespaces (by the nsfs inode): sandboxes whose CNI DEL never ran.
func (n *RealNode) removeNetns(inodes map[uint64]bool) error {
	if len(inodes) == 0 {
		return nil
	}
	entries, _ := os.ReadDir(netnsDir)
	var errs []error
	for _, e := range entries {
		p := filepath.Join(netnsDir, e.Name())
		if !strings.HasPrefix(e.Name(), sandboxNetnsPrefix) || !inodes[nsInode(p)] {
			continue
		}
		n.rig.log.Warn("real node: removing a sandbox network namespace left mounted", "node", n.Name, "netns", p)
		errs = append(errs, removeNetnsMount(p))
	}
	return errors.Join(errs...)
}

// removeNetnsMount unmounts a network namespace's bind mount and removes its file.
func removeNetnsMount(p string) error {
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("unmount %s: %w", p, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}

// unmountUnder lazily unmounts every mount point at or under dir, deepest first.
func unmountUnder(dir string) error {
	points, err := mountPoints()
	if err != nil {
		return err
	}
	var mine []string
	for _, p := range points {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			mine = append(mine, p)
		}
	}
	// Longer paths first: children before parents; the same point mounted twice is unmounted twice.
	slices.SortStableFunc(mine, func(a, b string) int { return len(b) - len(a) })
	var errs []error
	for _, p := range mine {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// mountPoints lists this mount namespace's mount points (field 5 of mountinfo, octal escapes
// decoded).
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			out = append(out, unescapeMount(fields[4]))
		}
	}
	return out, sc.Err()
}

// unescapeMount decodes mountinfo's \040-style octal escapes.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
