package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
)

// Systemd plays systemd's part for one edgeovn in a rig, as edgeovn.socket and a Type=notify
// edgeovn.service have it: it holds the CNI socket for the whole run and passes it to every
// start of edgeovn (descriptor 3, LISTEN_FDS=1, LISTEN_PID the started process's own pid, as
// sd_listen_fds(3) reads them), and it listens where NOTIFY_SOCKET points for READY=1. A CNI
// call made while edgeovn is down waits in the socket's queue, as under systemd.
type Systemd struct {
	rig    *harness.Rig
	spec   Spec
	socket *net.UnixListener
	notify *net.UnixConn

	mu      sync.Mutex
	readyAt []time.Time // each READY=1, in order
	changed chan struct{}

	// Proc is the running (or last) edgeovn.
	Proc *harness.Process
}

// Socket is where the rig's edgeovn serves CNI.
func Socket(rig *harness.Rig) string { return filepath.Join(rig.Dir, "cni.sock") }

// NewSystemd creates the CNI socket (0600, in the rig's root-only directory) and the notify
// socket; Close releases them.
func NewSystemd(rig *harness.Rig, spec Spec) (*Systemd, error) {
	path := Socket(rig)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove old cni socket: %w", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s as edgeovn.socket: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	notifyPath := filepath.Join(rig.Dir, "notify.sock")
	_ = os.Remove(notifyPath)
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notifyPath, Net: "unixgram"})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("listen on %s as systemd's notify socket: %w", notifyPath, err)
	}
	s := &Systemd{rig: rig, spec: spec, socket: ln, notify: notify, changed: make(chan struct{})}
	go s.readNotifications()
	return s, nil
}

func (s *Systemd) readNotifications() {
	buf := make([]byte, 4096)
	for {
		n, err := s.notify.Read(buf)
		if err != nil {
			return
		}
		if !strings.Contains("\n"+string(buf[:n])+"\n", "\nREADY=1\n") {
			continue
		}
		s.mu.Lock()
		s.readyAt = append(s.readyAt, time.Now())
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
	}
}

// Readies counts the READY=1 received so far (one per start that got ready).
func (s *Systemd) Readies() int {
	n, _ := s.readies()
	return n
}

// readies returns how many READY=1 arrived so far and a channel closed at the next one.
func (s *Systemd) readies() (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.readyAt), s.changed
}

// Start starts edgeovn under name with the socket passed, and returns without waiting.
func (s *Systemd) Start(ctx context.Context, name string) (*harness.Process, error) {
	f, err := s.socket.File()
	if err != nil {
		return nil, fmt.Errorf("pass the cni socket: %w", err)
	}
	defer f.Close() // the child has its copy
	spec := s.spec
	spec.Name = name
	p, err := startWith(ctx, s.rig, spec, func(ps *harness.ProcessSpec) {
		// LISTEN_PID must be the service's own pid, known only once it runs: systemd sets it
		// between fork and exec; here a shell that execs edgeovn (keeping its pid) does.
		ps.Args = append([]string{"-c", `export LISTEN_PID=$$; exec "$0" "$@"`, ps.Path}, ps.Args...)
		ps.Path = "/bin/sh"
		ps.Env = append(ps.Env, "LISTEN_FDS=1", "LISTEN_FDNAMES=edgeovn.socket", "NOTIFY_SOCKET="+s.notify.LocalAddr().String())
		ps.ExtraFiles = []*os.File{f}
	})
	if err != nil {
		return nil, err
	}
	s.Proc = p
	return p, nil
}

// Restart is one restart as systemd does it after a crash or `systemctl restart`: sig to the
// running edgeovn (SIGTERM, or SIGKILL for a crash), the wait for its exit, a start, and the
// wait for its READY=1.
type Restart struct {
	Stop    time.Duration // sig sent to the old process gone
	ToReady time.Duration // new process started to its READY=1
	// ToMain is the new process started to its main function (the start through `ip netns
	// exec` and a shell, the Go runtime's and the packages' initialisation); Phases are the
	// new process's own record of its start, from main to READY=1. Both are zero when the
	// binary logs no record (an edgeovn older than the record, run for comparison).
	ToMain time.Duration
	Phases Phases
}

// Restart restarts edgeovn as name.
func (s *Systemd) Restart(ctx context.Context, sig syscall.Signal, name string) (Restart, error) {
	var r Restart
	old := s.Proc
	if old == nil {
		return r, errors.New("restart: edgeovn was never started")
	}
	n, _ := s.readies()
	t0 := time.Now()
	if err := syscall.Kill(old.PID, sig); err != nil {
		return r, fmt.Errorf("signal edgeovn (pid %d): %w", old.PID, err)
	}
	select {
	case <-old.Done():
	case <-ctx.Done():
		return r, ctx.Err()
	}
	r.Stop = time.Since(t0)
	if _, err := s.Start(ctx, name); err != nil {
		return r, err
	}
	started := time.Now()
	at, err := s.WaitReady(ctx, n)
	if err != nil {
		return r, err
	}
	r.ToReady = at.Sub(started)
	if p, err := ReadPhases(s.Proc.Log); err == nil {
		r.Phases, r.ToMain = p, p.Origin.Sub(started)
	}
	return r, nil
}

// WaitReady waits for READY=1 number n+1 (n counted before the start) and returns when it came.
func (s *Systemd) WaitReady(ctx context.Context, n int) (time.Time, error) {
	for {
		got, next := s.readies()
		if got > n {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.readyAt[n], nil
		}
		select {
		case <-next:
		case <-s.Proc.Done():
			return time.Time{}, fmt.Errorf("edgeovn (pid %d) exited before READY=1: %v", s.Proc.PID, s.Proc.Wait())
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("wait for READY=1 from edgeovn: %w", ctx.Err())
		}
	}
}

// Close releases the sockets (edgeovn.socket stopped); the process is the rig's to stop.
func (s *Systemd) Close() error {
	return errors.Join(s.socket.Close(), s.notify.Close())
}
