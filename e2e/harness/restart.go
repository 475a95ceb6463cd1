package harness

import (
	"context"
	"fmt"
	"slices"
)

// Daemon returns the latest process the rig started under name ("ovs-vswitchd",
// "ovn-controller", ...), so that a test can kill it by its PID.
func (r *Rig) Daemon(name string) (*Process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.procs) - 1; i >= 0; i-- {
		if r.procs[i].Name == name {
			return r.procs[i], nil
		}
	}
	return nil, fmt.Errorf("rig in %s started no process named %q", r.Dir, name)
}

// Processes returns the processes the rig has started, in start order (exited ones too).
func (r *Rig) Processes() []*Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.procs)
}

// RestartDaemon starts ovs-vswitchd, ovn-controller or a raft member's database server
// (ovsdb-nb, ovsdb-sb: it rejoins its cluster from its file) again, as the rig first started it,
// after a test has stopped or killed it, and waits until it answers on its control socket.
// The previous process must have exited.
func (r *Rig) RestartDaemon(ctx context.Context, name string) (*Process, error) {
	old, err := r.Daemon(name)
	if err != nil {
		return nil, err
	}
	select {
	case <-old.Done():
	default:
		return nil, fmt.Errorf("restart %s: pid %d is still running", name, old.PID)
	}
	switch name {
	case "ovs-vswitchd":
		spec := ProcessSpec{Name: name, Path: name, Args: append([]string{r.OVSEndpoint}, r.daemonFlags(name)...)}
		return r.spawn(ctx, spec, socketAccepts(r.path(name+".ctl")))
	case "ovn-controller":
		if err := r.startController(ctx); err != nil {
			return nil, err
		}
		return r.Daemon(name)
	case raftNB.name, raftSB.name:
		if !r.raftMember {
			return nil, fmt.Errorf("restart %s: only a raft member's database server can be restarted", name)
		}
		db := raftNB
		if name == raftSB.name {
			db = raftSB
		}
		return r.startRaftServer(ctx, db)
	}
	return nil, fmt.Errorf("restart %s: only ovs-vswitchd, ovn-controller and a raft member's ovsdb-nb / ovsdb-sb can be restarted", name)
}
