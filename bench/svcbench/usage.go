package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// traced are the rig's processes whose CPU time the trace reports, in its table's order.
var traced = []string{"edgeovn", "ovn-northd", "ovn-controller", "ovs-vswitchd", "ovsdb-nb", "ovsdb-sb", "ovsdb-ovs", "kube-apiserver", "etcd"}

// usage is a snapshot of what the rig's daemons have done so far: CPU time per process and
// the incremental engines' full recomputes of ovn-northd and ovn-controller.
type usage struct {
	cpu               map[string]time.Duration
	northdRecomputes  int // runs of ovn-northd's "northd" node that recomputed everything
	controllerRecomps int // recomputes of ovn-controller's logical_flow_output node
	// plugins is the CPU time of this process's reaped children (the CNI plugins libcni
	// runs, and what they run) at the snapshot's start and end: its own ovn-appctl runs
	// fall in between and are left out.
	pluginsStart, pluginsEnd time.Duration
}

// childrenCPU is the user plus system time of the reaped children of this process.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pluginsKey is the CNI plugins' line in perAdd.cpu.
const pluginsKey = "CNI plugins (loopback, edgeovn-cni, portmap when chained, what they run)"

func snapshot(ctx context.Context, rig *harness.Rig) (u usage, err error) {
	u = usage{cpu: map[string]time.Duration{}, pluginsStart: childrenCPU()}
	defer func() { u.pluginsEnd = childrenCPU() }()
	for _, name := range traced {
		p, err := rig.Daemon(name)
		if err != nil {
			return u, err
		}
		if u.cpu[name], err = benchkit.CPUTime(p.PID); err != nil {
			return u, err
		}
	}
	if u.northdRecomputes, err = recomputes(ctx, rig, filepath.Join(rig.Dir, "ovn-northd.ctl"), "northd"); err != nil {
		return u, err
	}
	ctl, err := controllerCtl(rig)
	if err != nil {
		return u, err
	}
	u.controllerRecomps, err = recomputes(ctx, rig, ctl, "logical_flow_output")
	return u, err
}

// recomputes reads `inc-engine/show-stats` of an OVN daemon and returns the recompute count
// of one engine node.
func recomputes(ctx context.Context, rig *harness.Rig, ctl, node string) (int, error) {
	out, err := rig.Run(ctx, "ovn-appctl", "-t", ctl, "inc-engine/show-stats")
	if err != nil {
		return 0, err
	}
	return parseRecomputes(string(out), node)
}

// parseRecomputes finds "Node: <node>" and its "- recompute: N" line.
func parseRecomputes(stats, node string) (int, error) {
	lines := strings.Split(stats, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "Node: "+node || i+1 >= len(lines) {
			continue
		}
		f := strings.Fields(lines[i+1])
		if len(f) == 3 && f[1] == "recompute:" {
			return strconv.Atoi(f[2])
		}
	}
	return 0, fmt.Errorf("inc-engine/show-stats has no recompute count for node %q", node)
}

// controllerCtl is ovn-controller's control socket: 23.03 names it by its pid.
func controllerCtl(rig *harness.Rig) (string, error) {
	p, err := rig.Daemon("ovn-controller")
	if err != nil {
		return "", err
	}
	return filepath.Join(rig.Dir, fmt.Sprintf("ovn-controller.%d.ctl", p.PID)), nil
}

// perAdd is what happened between two snapshots, divided by the ADDs made in between.
type perAdd struct {
	cpu               map[string]time.Duration
	northdRecomputes  float64
	controllerRecomps float64
}

func (u usage) since(before usage, adds int) perAdd {
	p := perAdd{cpu: map[string]time.Duration{}}
	if adds == 0 {
		return p
	}
	for name, d := range u.cpu {
		p.cpu[name] = (d - before.cpu[name]) / time.Duration(adds)
	}
	p.cpu[pluginsKey] = (u.pluginsStart - before.pluginsEnd) / time.Duration(adds)
	p.northdRecomputes = float64(u.northdRecomputes-before.northdRecomputes) / float64(adds)
	p.controllerRecomps = float64(u.controllerRecomps-before.controllerRecomps) / float64(adds)
	return p
}
