package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Reboot is a host crash and boot, as far as processes go: every process the rig started
// (edgeovn too) is SIGKILLed by PID at once and reaped, the daemons' pid and control files
// are removed, and the rig's own daemons are started again in boot order (OVN central, the
// host's Open vSwitch, ovn-controller, etcd, kube-apiserver) from their database files, each
// waited for. The kernel state the daemons held goes with them (ovs-vswitchd's tap devices:
// br-int, ovn0); pod network namespaces are the test's to remove. Processes that are not
// the rig's (edgeovn) are not started again: the caller starts them, and gets the time at
// which the first daemon was started (the boot) and the time at which Open vSwitch answered.
// A raft member's rig cannot reboot (its cluster needs its peers).
func (r *Rig) Reboot(ctx context.Context) (BootTimes, error) {
	if r.raftMember {
		return BootTimes{}, errors.New("reboot: a raft member's rig cannot reboot alone")
	}
	procs := r.Processes()
	killAtOnce(procs)
	if err := r.removeRunFiles(); err != nil {
		return BootTimes{}, err
	}
	var bt BootTimes
	bt.Start = time.Now()
	for _, name := range bootOrder(procs) {
		if err := r.boot(ctx, name, procs); err != nil {
			return bt, fmt.Errorf("reboot: start %s: %w", name, err)
		}
		if name == "ovs-vswitchd" {
			bt.OVSUp = time.Now()
		}
	}
	r.log.Info("rig rebooted", "dir", r.Dir, "took", time.Since(bt.Start))
	return bt, nil
}

// BootTimes are the moments of a Reboot the figures are measured from.
type BootTimes struct {
	Start time.Time // the first daemon started
	OVSUp time.Time // ovs-vswitchd answered
}

// killAtOnce sends SIGKILL to every live process first and only then reaps them, so that none
// sees another's death before its own.
func killAtOnce(procs []*Process) {
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	for _, p := range procs {
		<-p.done
	}
}

// removeRunFiles deletes the pid and control files a crash leaves in the run directory.
func (r *Rig) removeRunFiles() error {
	var errs []error
	for _, pattern := range []string{"*.pid", "*.ctl"} {
		files, err := filepath.Glob(r.path(pattern))
		errs = append(errs, err)
		for _, f := range files {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// rigDaemons are the processes the rig itself starts, in boot order.
var rigDaemons = []string{nbDB.name, sbDB.name, "ovn-northd", vswitchDB.name, "ovs-vswitchd",
	"ovn-controller", "etcd", "kube-apiserver"}

// bootOrder returns the rig daemons among procs, in boot order, each once.
func bootOrder(procs []*Process) []string {
	var out []string
	for _, name := range rigDaemons {
		if slices.ContainsFunc(procs, func(p *Process) bool { return p.Name == name }) {
			out = append(out, name)
		}
	}
	return out
}

// boot starts the daemon again with the spec it was last started with and waits for it.
func (r *Rig) boot(ctx context.Context, name string, procs []*Process) error {
	var last *Process
	for _, p := range procs {
		if p.Name == name {
			last = p
		}
	}
	switch name {
	case "ovn-controller":
		return r.startController(ctx)
	case "kube-apiserver":
		return r.startAPIServer(ctx)
	case "etcd":
		_, err := r.spawn(ctx, last.spec, httpOK(r.NetnsPath, fmt.Sprintf("http://127.0.0.1:%d/health", etcdClientPort)))
		return err
	case nbDB.name, sbDB.name, vswitchDB.name:
		stem := map[string]string{nbDB.name: nbDB.stem, sbDB.name: sbDB.stem, vswitchDB.name: vswitchDB.stem}[name]
		_, err := r.spawn(ctx, last.spec, socketAccepts(r.path(stem+".sock")))
		return err
	}
	_, err := r.spawn(ctx, last.spec, socketAccepts(r.path(name+".ctl")))
	return err
}
