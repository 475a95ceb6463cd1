package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ProcessSpec describes a long-running process to start inside the rig's network namespace.
type ProcessSpec struct {
	// Name identifies the process; its output goes to <dir>/<Name>.log (appended, so a
	// restarted process keeps one log).
	Name string
	// Path is the binary, absolute or looked up in $PATH.
	Path string
	Args []string
	// Env is added to the rig's environment (the caller's, plus OVS_RUNDIR and OVN_RUNDIR set
	// to the run directory); later entries win.
	Env []string
	// Netns is the name (in /run/netns, as `ip netns` knows it) of the network namespace to run
	// in, a pod sandbox's, say. Empty means the rig's own.
	Netns string
	// HostMounts runs the process in this machine's mount namespace (nsenter --net) instead of
	// the private one `ip netns exec` gives, whose /sys is remounted for the network namespace
	// (which hides /sys/fs/cgroup) and whose mounts nobody else sees. The real node's
	// containerd needs it: the sandbox namespaces it mounts in /run/netns must be visible to
	// edgeovn, and its container mounts to itself across its shims.
	HostMounts bool
	// ExtraFiles are passed as descriptors 3, 4, ... (a socket, as systemd passes one).
	ExtraFiles []*os.File
}

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 5 * time.Second

// Process is a child started by the rig. Its PID is the program's own: `ip netns exec` execs.
type Process struct {
	Name string
	PID  int
	// Log is the path of the file that receives its stdout and stderr.
	Log string

	spec ProcessSpec // as started, so that Reboot can start it again
	cmd  *exec.Cmd
	done chan struct{}
	err  error // set before done is closed
}

// Done is closed when the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the process has exited and returns how it exited.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Stop sends SIGTERM, waits up to a few seconds, then sends SIGKILL, and waits for the exit.
// Stopping an exited process does nothing.
func (p *Process) Stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s (pid %d): %w", p.Name, p.PID, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s (pid %d): %w", p.Name, p.PID, err)
	}
	<-p.done
	return nil
}

// startRequest is what startProcess needs beyond the spec.
type startRequest struct {
	spec   ProcessSpec
	dir    string
	netns  string
	env    []string
	detach bool
}

// startProcess starts spec inside the namespace as a direct child, with its output appended
// to its log, and reaps it in the background.
func startProcess(req startRequest) (*Process, error) {
	path, err := exec.LookPath(req.spec.Path)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", req.spec.Name, err)
	}
	logPath := filepath.Join(req.dir, req.spec.Name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: open log: %w", req.spec.Name, err)
	}
	defer logFile.Close() // the child holds its own copy

	args := append([]string{"netns", "exec", req.netns, path}, req.spec.Args...)
	cmd := exec.Command("ip", args...)
	if req.spec.HostMounts {
		// nsenter execs the program after setns: the PID stays the program's.
		args = append([]string{"--net=" + filepath.Join(netnsDir, req.netns), "--", path}, req.spec.Args...)
		cmd = exec.Command("nsenter", args...)
	}
	cmd.Env = append(append(os.Environ(), req.env...), req.spec.Env...)
	cmd.Dir = req.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.ExtraFiles = req.spec.ExtraFiles
	cmd.SysProcAttr = sysProcAttr(req.detach)
	if err := spawn(cmd); err != nil {
		return nil, fmt.Errorf("start %s in netns %s: %w", req.spec.Name, req.netns, err)
	}
	p := &Process{Name: req.spec.Name, PID: cmd.Process.Pid, Log: logPath, spec: req.spec, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// sysProcAttr: a detached child gets its own session so it survives the starting program and
// its terminal; an attached one is killed if the test process dies, so a crashed test leaves
// no daemons behind.
func sysProcAttr(detach bool) *syscall.SysProcAttr {
	if detach {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// Pdeathsig fires when the *thread* that forked the child exits, and Go ends threads whose
// goroutine locked them and returned without unlocking (testutils.NewNS and ns.Do do so),
// so a child forked from an arbitrary thread is killed at a random later moment. Every child
// is therefore forked from one thread that stays locked for the life of the process.
var spawnRequests = make(chan spawnRequest)

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

var spawnerOnce sync.Once

func spawn(cmd *exec.Cmd) error {
	spawnerOnce.Do(func() {
		go func() {
			runtime.LockOSThread() // never unlocked: this thread lives as long as the process
			for r := range spawnRequests {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
