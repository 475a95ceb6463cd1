package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// cgroupV1Root is where this host mounts its cgroup v1 hierarchies, one directory each.
const cgroupV1Root = "/sys/fs/cgroup"

// cgroupHierarchies lists the mounted cgroup v1 hierarchies (cpu, memory, name=systemd's
// "systemd", ...), leaving out the cgroup2 "unified" one that hybrid hosts mount beside them.
func cgroupHierarchies() ([]string, error) {
	entries, err := os.ReadDir(cgroupV1Root)
	if err != nil {
		return nil, fmt.Errorf("list cgroup hierarchies: %w", err)
	}
	var out []string
	for _, e := range entries {
		dir := filepath.Join(cgroupV1Root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil || e.Name() == "unified" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
			continue // a cgroup2 mount
		}
		out = append(out, dir)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cgroup v1 hierarchies under %s (a cgroup v2 host needs no cgroup root here)", cgroupV1Root)
	}
	return out, nil
}

// createCgroups makes each cgroup in every hierarchy, parents first (the kubelet's cgroupRoot
// must exist, and so must the shims' cgroup), giving each cpuset cgroup its parent's CPUs and
// memory nodes, which a new cpuset cgroup lacks.
func createCgroups(names ...string) error {
	hs, err := cgroupHierarchies()
	if err != nil {
		return err
	}
	for _, h := range hs {
		for _, name := range names {
			if err := createCgroup(h, name); err != nil {
				return err
			}
		}
	}
	return nil
}

func createCgroup(hierarchy, name string) error {
	dir := filepath.Join(hierarchy, name)
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	if filepath.Base(hierarchy) != "cpuset" {
		return nil
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		v, err := os.ReadFile(filepath.Join(filepath.Dir(dir), f))
		if err != nil {
			return fmt.Errorf("read %s of %s: %w", f, filepath.Dir(dir), err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
			return fmt.Errorf("set %s of %s: %w", f, dir, err)
		}
	}
	return nil
}

// cgroupPIDs returns every process in the node's cgroup tree (found in any hierarchy).
func cgroupPIDs(name string) []int {
	hs, _ := cgroupHierarchies()
	seen := map[int]bool{}
	for _, h := range hs {
		_ = filepath.WalkDir(filepath.Join(h, name), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	pids := make([]int, 0, len(seen))
	for p := range seen {
		pids = append(pids, p)
	}
	slices.Sort(pids)
	return pids
}

// removeCgroupRoot removes the node's cgroup tree, deepest first, in every hierarchy. A cgroup
// that still holds a process cannot be removed: that is reported.
func removeCgroupRoot(name string) error {
	hs, err := cgroupHierarchies()
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hs {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(h, name), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}
