package ovsdbtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// Server is a running ovsdb-server serving one database.
type Server struct {
	Dir      string // run directory holding the database, socket, log and pidfile
	Socket   string // path of the unix socket
	Endpoint string // "unix:" + Socket, for libovsdb and ovn-nbctl/ovs-vsctl --db
	// TCPEndpoint is "tcp:127.0.0.1:PORT", where the server also listens.
	TCPEndpoint string

	db      string
	remotes []string
	proc    *process
}

// SchemaPath returns the path of a schema file in the repository's ovn/schema directory, the
// one the generated models were built from ("ovn-nb.ovsschema", "vswitch.ovsschema").
func SchemaPath(t testing.TB, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locate ovsdbtest source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "schema", name)
}

// Start creates a database from schema and serves it until the test ends.
func Start(t testing.TB, schema string) *Server {
	t.Helper()
	requireTools(t)
	dir := tempDir(t)
	db := filepath.Join(dir, "x.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, schema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create %s: %v: %s", schema, err, out)
	}
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "db.sock"), db: db}
	s.Endpoint = "unix:" + s.Socket
	port := freePorts(t, 1)[0]
	s.TCPEndpoint = fmt.Sprintf("tcp:127.0.0.1:%d", port)
	s.remotes = []string{"punix:" + s.Socket, fmt.Sprintf("ptcp:%d:127.0.0.1", port)}
	s.proc = startServer(t, dir, db, s.remotes...)
	s.waitSocket(t)
	return s
}

// Stop stops the server by PID and waits for it to exit; the database file stays.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.proc.stop()
}

// Restart stops the server and serves the same database file on the same socket again.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.proc.stop()
	_ = os.Remove(s.Socket)
	s.proc = startServer(t, s.Dir, s.db, s.remotes...)
	s.waitSocket(t)
}

// Pause freezes the server with SIGSTOP: its connections stay open but nothing answers, as
// with a hung server or a partition. Resume (or the end of the test) thaws it.
func (s *Server) Pause() { _ = s.proc.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume thaws a paused server with SIGCONT.
func (s *Server) Resume() { _ = s.proc.cmd.Process.Signal(syscall.SIGCONT) }

func requireTools(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "ovsdb-server tests need root")
	}
	for _, bin := range []string{"ovsdb-server", "ovsdb-tool"} {
		if _, err := exec.LookPath(bin); err != nil {
			skip.Now(t, "%s not installed (make deps)", bin)
		}
	}
}

func tempDir(t testing.TB) string {
	t.Helper()
	// A short directory name keeps the socket path under the 108-byte sun_path limit.
	dir, err := os.MkdirTemp("", "ovsdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// process is one ovsdb-server child, waited for by its own goroutine.
type process struct {
	cmd    *exec.Cmd
	dir    string
	exited chan struct{}
	err    error
}

// startServer runs ovsdb-server on db in dir, listening on remote; it is stopped by PID when
// the test ends at the latest.
func startServer(t testing.TB, dir, db string, remotes ...string) *process {
	t.Helper()
	args := make([]string, 0, len(remotes)+5)
	for _, r := range remotes {
		args = append(args, "--remote="+r)
	}
	cmd := exec.Command("ovsdb-server", append(args,
		"--unixctl="+filepath.Join(dir, "ctl"),
		"--pidfile="+filepath.Join(dir, "pid"),
		"--no-chdir",
		"--log-file="+filepath.Join(dir, "log"),
		db)...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ovsdb-server: %v", err)
	}
	p := &process{cmd: cmd, dir: dir, exited: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	t.Cleanup(p.stop)
	return p
}

// stop sends SIGTERM, then SIGKILL after 5 s; it is safe to call more than once.
func (p *process) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // a paused server must wake to exit
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
		p.kill()
	}
}

// kill sends SIGKILL, as a crash would, and waits for the exit.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

func (p *process) log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	return string(b)
}

func (s *Server) waitSocket(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(s.Socket); err == nil {
			return
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat %s: %v", s.Socket, err)
		}
		select {
		case <-s.proc.exited:
			t.Fatalf("ovsdb-server exited before serving: %v: %s", s.proc.err, s.proc.log())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("ovsdb-server socket %s did not appear", s.Socket)
}

// Run runs an OVS/OVN command-line tool against the server (the tool's --db flag is added
// first) and returns its standard output; it fails the test when the tool fails.
func (s *Server) Run(t testing.TB, tool string, args ...string) string {
	t.Helper()
	return runTool(t, s.Endpoint, tool, args...)
}

func runTool(t testing.TB, db, tool string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		skip.Now(t, "%s not installed (make deps)", tool)
	}
	full := append([]string{"--db=" + db}, args...)
	out, err := exec.Command(tool, full...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s %v: %v: %s", tool, full, err, ee.Stderr)
		}
		t.Fatalf("%s %v: %v", tool, full, err)
	}
	return string(out)
}
