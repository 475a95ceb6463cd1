package benchkit

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ChildPID is the PID of the child of parent whose command name is comm, 0 if none runs.
func ChildPID(parent int, comm string) int {
	stats, _ := os.ReadDir("/proc")
	for _, e := range stats {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open || s[open+1:closing] != comm {
			continue
		}
		if fs := strings.Fields(s[closing+1:]); len(fs) > 1 && fs[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	return 0
}

// VmRSS is a process's resident set (kB) from /proc/PID/status.
func VmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
