package ovsdbtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// Server is a running ovsdb-server serving one database.
type Server struct {
	Dir      string // run directory holding the database, socket, log and pidfile
	Socket   string // path of the unix socket
	Endpoint string // "unix:" + Socket, for libovsdb and ovn-nbctl/ovs-vsctl --db
}

// SchemaPath returns the path of a schema file in the repository's ovn/schema directory, the
// one the generated models were built from ("ovn-nb.ovsschema", "vswitch.ovsschema").
func SchemaPath(t testing.TB, name string) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("locate ovsdbtest source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "schema", name)
}

// Start creates a database from schema and serves it until the test ends.
func Start(t testing.TB, schema string) *Server {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: ovsdb-server tests need root")
	}
	for _, bin := range []string{"ovsdb-server", "ovsdb-tool"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not installed", bin)
		}
	}
	// A short directory name keeps the socket path under the 108-byte sun_path limit.
	dir, err := os.MkdirTemp("", "ovsdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := filepath.Join(dir, "x.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, schema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create %s: %v: %s", schema, err, out)
	}
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "db.sock")}
	s.Endpoint = "unix:" + s.Socket
	s.run(t, db)
	return s
}

func (s *Server) run(t testing.TB, db string) {
	t.Helper()
	cmd := exec.Command("ovsdb-server",
		"--remote=punix:"+s.Socket,
		"--unixctl="+filepath.Join(s.Dir, "ctl"),
		"--pidfile="+filepath.Join(s.Dir, "pid"),
		"--no-chdir",
		"--log-file="+filepath.Join(s.Dir, "log"),
		db)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ovsdb-server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	s.waitSocket(t, exited)
}

func (s *Server) waitSocket(t testing.TB, exited <-chan error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(s.Socket); err == nil {
			return
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("stat %s: %v", s.Socket, err)
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
			t.Fatalf("ovsdb-server exited before serving: %v: %s", err, log)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("ovsdb-server socket %s did not appear", s.Socket)
}

// Run runs an OVS/OVN command-line tool against the server (the tool's --db flag is added
// first) and returns its standard output; it fails the test when the tool fails.
func (s *Server) Run(t testing.TB, tool string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("skipping: %s not installed", tool)
	}
	full := append([]string{"--db=" + s.Endpoint}, args...)
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
