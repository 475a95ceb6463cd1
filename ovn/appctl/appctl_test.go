package appctl

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// startVSwitchd runs a real ovs-vswitchd on a fresh Open_vSwitch database, laid out as a
// packaged install is: pid file and pid-named control socket in the run directory beside the
// database socket. It is stopped by PID when the test ends.
func startVSwitchd(t *testing.T) *ovsdbtest.Server {
	t.Helper()
	if _, err := exec.LookPath("ovs-vswitchd"); err != nil {
		skip.Now(t, "ovs-vswitchd not installed (make deps)")
	}
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "vswitch.ovsschema"))
	srv.Run(t, "ovs-vsctl", "--no-wait", "init")
	cmd := exec.Command("ovs-vswitchd", srv.Endpoint, "--pidfile", "--no-chdir",
		"--log-file="+filepath.Join(srv.Dir, "ovs-vswitchd.log"), "-vconsole:off", "-vsyslog:off")
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+srv.Dir)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ovs-vswitchd: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	// The socket file exists from bind() on; the daemon answers once it listens.
	sock := filepath.Join(srv.Dir, "ovs-vswitchd."+strconv.Itoa(cmd.Process.Pid)+".ctl")
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := Call(ctx, sock, "version")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(srv.Dir, "ovs-vswitchd.log"))
			t.Fatalf("ovs-vswitchd never answered on %s: %v\n%s", sock, err, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return srv
}

func TestCallRealVSwitchd(t *testing.T) {
	srv := startVSwitchd(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rundir := RunDir(srv.Endpoint)
	if rundir != srv.Dir {
		t.Fatalf("RunDir(%s) = %s, want %s", srv.Endpoint, rundir, srv.Dir)
	}
	sock, err := ControlSocket(rundir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Call(ctx, sock, "version")
	if err != nil || !strings.Contains(out, "ovs-vswitchd") {
		t.Fatalf("version = %q, %v", out, err)
	}
	if err := PurgeFlows(ctx, sock); err != nil {
		t.Fatalf("PurgeFlows: %v", err)
	}
	// A command the daemon does not know is an error carrying its message, not a reply.
	out, err = Call(ctx, sock, "no/such-command", "x")
	if !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "no/such-command") || out != "" {
		t.Fatalf("unknown command = %q, %v; want ErrCommand naming it", out, err)
	}
	// The daemon is still there for the next call.
	if _, err := Call(ctx, sock, "version"); err != nil {
		t.Fatalf("version after a rejected command: %v", err)
	}
}

func TestControlSocketNamedByUnixctl(t *testing.T) {
	dir := t.TempDir()
	if _, err := ControlSocket(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), filepath.Join(dir, "ovs-vswitchd.ctl")) {
		t.Fatalf("ControlSocket in an empty dir = %v, want not found naming what it tried", err)
	}
	// A stale pid file (the daemon restarted, or died) does not hide a --unixctl socket.
	if err := os.WriteFile(filepath.Join(dir, "ovs-vswitchd.pid"), []byte("999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "ovs-vswitchd.ctl"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got, err := ControlSocket(dir)
	if err != nil || got != filepath.Join(dir, "ovs-vswitchd.ctl") {
		t.Fatalf("ControlSocket = %q, %v", got, err)
	}
}

func TestCallMissingSocket(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "nothing.ctl")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Call(ctx, sock, "version"); err == nil || !strings.Contains(err.Error(), sock) {
		t.Fatalf("Call on a missing socket = %v, want an error naming it", err)
	}
}

func TestRunDir(t *testing.T) {
	for in, want := range map[string]string{
		"unix:/run/openvswitch/db.sock": "/run/openvswitch",
		"unix:db.sock":                  DefaultRunDir,
		"tcp:127.0.0.1:6640":            DefaultRunDir,
		"":                              DefaultRunDir,
	} {
		if got := RunDir(in); got != want {
			t.Errorf("RunDir(%q) = %q, want %q", in, got, want)
		}
	}
}
