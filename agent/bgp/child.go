package bgp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// The speaker process is started again after it ended, first after restartFirst, doubling
// up to restartMax; a process that ran longer than restartMax starts the count again.
var restartFirst, restartMax = time.Second, 30 * time.Second

// stopWait bounds the speaker process's own stop (a Cease to each peer) at edgeovn's stop.
var stopWait = 10 * time.Second

// supervise runs the speaker process from the first announcement wants gives until ctx
// ends, starting it again with a growing delay whenever it ends or cannot start: BGP never
// stops the node role. Every start is given the latest full state.
func supervise(ctx context.Context, req Request, wants <-chan []netip.Prefix) error {
	var want []netip.Prefix
	select {
	case <-ctx.Done():
		return nil
	case want = <-wants:
	}
	wait := restartFirst
	for {
		started := time.Now()
		err := runChild(ctx, req, &want, wants)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(started) > restartMax {
			wait = restartFirst
		}
		req.Log.Error("bgp speaker not running, starting it again", "err", err, "retry_in", wait)
		report(req, speakerproto.Status{}, "speaker not running: "+err.Error()+"\n")
		timer := time.NewTimer(wait)
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil
			case want = <-wants:
			case <-timer.C:
				waiting = false
			}
		}
		wait = min(2*wait, restartMax)
	}
}

func report(req Request, st speakerproto.Status, text string) {
	if req.Report != nil {
		req.Report.SetBGP(st.Up(), len(st.Announced), text)
	}
}

// runChild runs one speaker process until it ends (an error saying how) or ctx ends (nil,
// once the process has stopped). want is the latest state, kept across processes.
func runChild(ctx context.Context, req Request, want *[]netip.Prefix, wants <-chan []netip.Prefix) error {
	opts, err := options(ctx, req)
	if err != nil {
		return err
	}
	// Pdeathsig fires when the thread that started the child ends, not the process: this
	// goroutine keeps its thread for the child's life (the runtime never ends a locked
	// thread while its goroutine runs).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := startChild(req)
	if err != nil {
		return err
	}
	send := func() {
		// A failed write is a process that is ending: its end is read from stdout.
		_ = p.in.Encode(speakerproto.Desired{Options: opts, Prefixes: *want})
	}
	send()
	var said string
	for {
		select {
		case <-ctx.Done():
			return p.stop(req.Log)
		case *want = <-wants:
			send()
		case r, ok := <-p.reports:
			if !ok {
				err := p.cmd.Wait()
				if said != "" {
					err = fmt.Errorf("%s (%v)", said, err)
				}
				return fmt.Errorf("bgp speaker process %d ended: %w", p.cmd.Process.Pid, err)
			}
			if r.Error != "" {
				said = r.Error
			}
			if r.Status != nil {
				report(req, *r.Status, r.Status.String())
			}
		}
	}
}

// child is a running speaker process.
type child struct {
	cmd     *exec.Cmd
	stdin   io.Closer
	in      *json.Encoder
	reports <-chan speakerproto.Report // closed at the end of its stdout
}

// startChild starts the speaker process, which gets SIGTERM if this thread (and so
// edgeovn) ends before it; its log goes to edgeovn's stderr.
func startChild(req Request) (*child, error) {
	cmd := exec.Command(req.Speaker, "--log-level="+levelOf(req.Log))
	cmd.Env = append(os.Environ(), speakerproto.ParentEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("bgp speaker %s: %w", req.Speaker, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("bgp speaker %s: %w", req.Speaker, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start bgp speaker: %w", err)
	}
	req.Log.Info("bgp speaker process started", "pid", cmd.Process.Pid, "path", req.Speaker)
	reports := make(chan speakerproto.Report)
	go func() {
		defer close(reports)
		dec := json.NewDecoder(stdout)
		for {
			var r speakerproto.Report
			if err := dec.Decode(&r); err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
					req.Log.Warn("bgp speaker process: unreadable status", "err", err)
				}
				return
			}
			reports <- r
		}
	}()
	return &child{cmd: cmd, stdin: stdin, in: json.NewEncoder(stdin), reports: reports}, nil
}

// stop ends the speaker process as edgeovn stops: the end of its input (it closes the
// sessions with a Cease, or, with graceful restart, leaves them to its exit), then SIGKILL
// after stopWait.
func (c *child) stop(log *slog.Logger) error {
	c.stdin.Close()
	timer := time.NewTimer(stopWait)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-c.reports:
			if ok {
				continue
			}
		case <-timer.C:
			log.Warn("bgp speaker process did not stop, killing it", "pid", c.cmd.Process.Pid)
			_ = c.cmd.Process.Kill()
			for range c.reports {
			}
		}
		_ = c.cmd.Wait()
		log.Info("bgp speaker process stopped", "pid", c.cmd.Process.Pid)
		return nil
	}
}

// levelOf is log's level, for the speaker process's own log.
func levelOf(log *slog.Logger) string {
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn} {
		if log.Enabled(context.Background(), l) {
			return l.String()
		}
	}
	return slog.LevelError.String()
}

// options are the speaker's options from the configuration, with the router ID resolved.
func options(ctx context.Context, req Request) (speakerproto.Options, error) {
	b := req.BGP
	id, err := routerID(ctx, b, req.HostIPv4)
	if err != nil {
		return speakerproto.Options{}, err
	}
	return speakerproto.Options{ClusterAS: b.ClusterAS, NeighborAS: b.NeighborAS, Neighbors: b.Neighbors(), RouterID: id,
		AuthPassword: b.AuthPassword, HoldTime: b.HoldTime, GracefulRestart: b.GracefulRestart,
		GracefulRestartTime: b.GracefulRestartTime, PassiveMode: b.PassiveMode, EBGPMultihop: b.EBGPMultihop}, nil
}
