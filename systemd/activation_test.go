package systemd

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The child half of the activation tests: a process started the way systemd starts a socket-
// activated service (the socket as descriptor 3, LISTEN_FDS=1, LISTEN_PID its own pid).
const childEnv = "EDGEOVN_ACTIVATION_CHILD"

func TestMain(m *testing.M) {
	if path, ok := os.LookupEnv(childEnv); ok {
		os.Exit(activationChild(path))
	}
	os.Exit(m.Run())
}

// activationChild takes the socket for path and answers one connection with "served"; with no
// socket for path it prints "none".
func activationChild(path string) int {
	if os.Getenv("LISTEN_PID") == "self" {
		// systemd sets LISTEN_PID between fork and exec; the child's own pid is only known here.
		os.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()))
	}
	ln, err := ActivatedListener(path, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if os.Getenv("LISTEN_FDS") != "" || os.Getenv("LISTEN_PID") != "" {
		fmt.Println("error: activation environment left for children")
		return 1
	}
	if ln == nil {
		fmt.Println("none")
		return 0
	}
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Fprintln(c, "served")
	c.Close()
	ln.Close()
	fmt.Println("taken")
	return 0
}

// startChild starts the test binary as a socket-activated child for path with ln as fd 3.
func startChild(t *testing.T, ln *net.UnixListener, path, listenPID string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path, "LISTEN_FDS=1", "LISTEN_PID="+listenPID)
	cmd.ExtraFiles = []*os.File{f}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// TestActivatedListener: the passed socket serves; a connection made before the child took it
// waits in the kernel's queue and is answered; the socket outlives the child (closing its copy
// does not unlink the path), so a second child serves on it too, as across restarts.
func TestActivatedListener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cni.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for i := range 2 {
		conn, err := net.Dial("unix", path) // queued before anyone accepts
		if err != nil {
			t.Fatal(err)
		}
		cmd, out := startChild(t, ln, path, "self")
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		conn.Close()
		if werr := cmd.Wait(); werr != nil || line != "served\n" || !strings.Contains(out.String(), "taken") {
			t.Fatalf("child %d: answered %q (%v), exit %v, output:\n%s", i, line, err, werr, out)
		}
		if _, err := os.Lstat(path); err != nil {
			t.Fatalf("after child %d: socket path gone: %v", i, err)
		}
	}
}

// TestActivatedListenerOtherPath: a socket for another path is not taken (and the child says
// why); LISTEN_PID naming another process means the sockets are not this process's.
func TestActivatedListenerOtherPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "other.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct{ path, pid, want string }{
		{filepath.Join(dir, "cni.sock"), "self", "not the configured cni socket"},
		{path, "1", "none"},
	} {
		cmd, out := startChild(t, ln, c.path, c.pid)
		if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), c.want) || !strings.Contains(out.String(), "none") {
			t.Errorf("path %s, LISTEN_PID %s: exit %v, output lacks %q or \"none\":\n%s", c.path, c.pid, err, c.want, out)
		}
	}
}
