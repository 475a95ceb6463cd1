package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Reboot is a host crash and boot, as far as processes go: every process the rig started
// (edgeovn too) is SIGKILLed by PID at once and reaped, the daemons' pid and control files
// are removed, and the rig's own daemons are started again in boot order (OVN central, the
// host's Open vSwitch, ovn-controller, etcd, kube-apiserver, then kube-controller-manager and
// kube-scheduler if the test started them) from their database files, each waited for. The kernel state the daemons held goes with them: ovs-vswitchd's tap devices
// (br-int, ovn0, a Cluster host's br-phy, whose address and route are set again) are
// deleted, as a boot would not find them; pod network namespaces are the test's to remove.
// A Cluster host reboots alone: its central stays up. Processes that are not the rig's
// (edgeovn) are not started again: the caller starts them (RebootUnits: in boot order). A rig with a real node reboots
// through RealNode.Reboot, which also kills the node's shims and pods. Reboot returns when the boot
// started and when Open vSwitch answered. A raft member's rig cannot reboot (its cluster
// needs its peers).
func (r *Rig) Reboot(ctx context.Context) (BootTimes, error) {
	return r.RebootUnits(ctx, nil)
}

// RebootUnits is Reboot with the caller's units (edgeovn's: its unit is After=ovn-host and
// Before=k3s.service) started as systemd would, as soon as ovn-controller answers, while etcd
// and the API server boot beside them. It returns when the daemons are up and units returned.
func (r *Rig) RebootUnits(ctx context.Context, units func(context.Context) error) (BootTimes, error) {
	procs, err := r.crash(ctx, nil)
	if err != nil {
		return BootTimes{}, err
	}
	return r.bootDaemons(ctx, procs, units)
}

// crash is a power cut: every process the rig started and the others given (by PID: a real
// node's shims and pods, which are not the rig's children) SIGKILLed at once, the rig's
// processes reaped, their pid and control files removed and ovs-vswitchd's taps deleted. It
// returns the rig's processes, which bootDaemons starts again from.
func (r *Rig) crash(ctx context.Context, others []int) ([]*Process, error) {
	if r.raftMember {
		return nil, errors.New("reboot: a raft member's rig cannot reboot alone")
	}
	procs := r.Processes()
	killAtOnce(procs, others)
	if err := r.removeRunFiles(); err != nil {
		return nil, err
	}
	if err := r.deleteTaps(ctx); err != nil {
		return nil, err
	}
	return procs, nil
}

// bootDaemons starts the rig's daemons among procs again in boot order, each waited for, and
// units (when given) once ovn-controller answers, beside the daemons after it.
func (r *Rig) bootDaemons(ctx context.Context, procs []*Process, units func(context.Context) error) (BootTimes, error) {
	bt := BootTimes{Start: time.Now(), Up: make(map[string]time.Time), readyz: make(chan time.Time, 1)}
	bt.APIReadyz = bt.readyz
	unitsDone := make(chan error, 1)
	if units == nil {
		unitsDone <- nil
	}
	for _, name := range bootOrder(procs) {
		if err := r.boot(ctx, name, procs, bt.readyz); err != nil {
			return bt, fmt.Errorf("reboot: start %s: %w", name, err)
		}
		bt.Up[name] = time.Now()
		switch name {
		case "ovs-vswitchd":
			bt.OVSUp = time.Now()
			if r.uplink != nil {
				if err := r.uplink(ctx); err != nil {
					return bt, fmt.Errorf("reboot: uplink: %w", err)
				}
			}
		case "ovn-controller":
			if units != nil {
				go func() { unitsDone <- units(ctx) }()
			}
		}
	}
	if err := <-unitsDone; err != nil {
		return bt, fmt.Errorf("reboot: boot units: %w", err)
	}
	r.log.Info("rig rebooted", "dir", r.Dir, "took", time.Since(bt.Start))
	return bt, nil
}

// BootTimes are the moments of a Reboot the figures are measured from.
type BootTimes struct {
	Start time.Time // the first daemon started
	OVSUp time.Time // ovs-vswitchd answered
	// Up is when each daemon booted answered (its process name: "ovn-controller",
	// "kube-apiserver" once it answered a list of pods, ...), for a bench's timeline.
	Up map[string]time.Time
	// APIReadyz receives when kube-apiserver's /readyz first said yes (after Up's
	// "kube-apiserver": bootAPIServer says why); nothing when the rig has none.
	APIReadyz <-chan time.Time
	readyz    chan time.Time
}

// killAtOnce sends SIGKILL to every live process (the rig's, then the other PIDs) first and
// only then reaps the rig's, so that none sees another's death before its own. The others are
// not this process's children: their reaping is their parent's (or PID 1's).
func killAtOnce(procs []*Process, others []int) {
	for _, p := range procs {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	for _, pid := range others {
		_ = syscall.Kill(pid, syscall.SIGKILL)
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

// deleteTaps deletes the tap devices ovs-vswitchd made for its bridges' internal ports
// (br-int, ovn0, br-phy): OVS makes them persistent, so they outlive the process with their
// addresses and routes, which a boot would not find. The rig's own uplink tap stays.
func (r *Rig) deleteTaps(ctx context.Context) error {
	out, err := r.Run(ctx, "sh", "-c", `for d in /sys/class/net/*; do [ -e "$d/tun_flags" ] && echo "${d##*/}"; done; true`)
	if err != nil {
		return fmt.Errorf("reboot: list tap devices: %w: %s", err, out)
	}
	var steps [][]string
	for _, name := range strings.Fields(string(out)) {
		if name != uplinkName {
			steps = append(steps, []string{"link", "del", name})
		}
	}
	return ipSteps(ctx, r.Netns, steps)
}

// rigDaemons are the processes the rig itself starts, in boot order.
var rigDaemons = []string{nbDB.name, sbDB.name, "ovn-northd", vswitchDB.name, "ovs-vswitchd",
	"ovn-controller", "etcd", "kube-apiserver"}

// controlPlane are the daemons a test may add to the rig (StartControllerManager,
// StartScheduler), booted after the API server when they ran: on a k3s server they live in
// the k3s process beside it.
var controlPlane = []string{"kube-controller-manager", "kube-scheduler"}

// bootOrder returns the rig daemons and control plane among procs, in boot order, each once.
func bootOrder(procs []*Process) []string {
	var out []string
	for _, name := range append(slices.Clone(rigDaemons), controlPlane...) {
		if slices.ContainsFunc(procs, func(p *Process) bool { return p.Name == name }) {
			out = append(out, name)
		}
	}
	return out
}

// boot starts the daemon again with the spec it was last started with and waits for it.
func (r *Rig) boot(ctx context.Context, name string, procs []*Process, readyz chan<- time.Time) error {
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
		return r.bootAPIServer(ctx, readyz)
	case "kube-controller-manager":
		_, err := r.spawn(ctx, last.spec, r.rootCAPublished)
		return err
	case "kube-scheduler":
		_, err := r.spawn(ctx, last.spec, r.schedulerLeaseHeld)
		return err
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
