package ovsdbtest

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// Cluster is a raft cluster of ovsdb-servers on loopback TCP, each in its own directory.
type Cluster struct {
	Members []*Member
	DBName  string // the database's name in the schema ("OVN_Northbound")
}

// Member is one server of a Cluster.
type Member struct {
	Dir      string
	Endpoint string // "tcp:127.0.0.1:PORT" for clients
	raft     string // "tcp:127.0.0.1:PORT" for the other members
	listen   string // ovsdb-server --remote for Endpoint
	proc     *process
}

// StartCluster creates a cluster of n members from schema (ovsdb-tool create-cluster on the
// first, join-cluster on the others), serves it and waits until every member has joined.
func StartCluster(t testing.TB, schema, dbName string, n int) *Cluster {
	t.Helper()
	requireTools(t)
	if _, err := exec.LookPath("ovs-appctl"); err != nil {
		skip.Now(t, "ovs-appctl not installed (make deps)")
	}
	ports := freePorts(t, 2*n)
	c := &Cluster{DBName: dbName}
	for i := range n {
		c.Members = append(c.Members, &Member{
			Dir:      tempDir(t),
			raft:     fmt.Sprintf("tcp:127.0.0.1:%d", ports[2*i]),
			Endpoint: fmt.Sprintf("tcp:127.0.0.1:%d", ports[2*i+1]),
			listen:   fmt.Sprintf("ptcp:%d:127.0.0.1", ports[2*i+1]),
		})
	}
	for i, m := range c.Members {
		args := []string{"create-cluster", m.db(), schema, m.raft}
		if i > 0 {
			args = []string{"join-cluster", m.db(), dbName, m.raft, c.Members[0].raft}
		}
		if out, err := exec.Command("ovsdb-tool", args...).CombinedOutput(); err != nil {
			t.Fatalf("ovsdb-tool %v: %v: %s", args, err, out)
		}
		m.proc = startServer(t, m.Dir, m.db(), m.listen)
	}
	for _, m := range c.Members {
		c.waitStatus(t, m, "Status: cluster member")
	}
	return c
}

func (m *Member) db() string { return filepath.Join(m.Dir, "x.db") }

// Endpoints returns every member's client endpoint.
func (c *Cluster) Endpoints() []string {
	eps := make([]string, len(c.Members))
	for i, m := range c.Members {
		eps[i] = m.Endpoint
	}
	return eps
}

// Status returns the member's "cluster/status" output, or "" when it is not running.
func (c *Cluster) Status(m *Member) string {
	select {
	case <-m.proc.exited:
		return ""
	default:
	}
	out, _ := exec.Command("ovs-appctl", "-t", filepath.Join(m.Dir, "ctl"), "cluster/status", c.DBName).Output()
	return string(out)
}

// Leader waits for a running member to report itself leader and returns it.
func (c *Cluster) Leader(t testing.TB) *Member {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range c.Members {
			if strings.Contains(c.Status(m), "Role: leader") {
				return m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no raft leader elected within 20s")
	return nil
}

// Kill kills the member with SIGKILL by PID, as a crash would, and waits for it to exit.
func (m *Member) Kill() { m.proc.kill() }

// Run runs an OVS/OVN tool against every member (the tool finds the leader itself).
func (c *Cluster) Run(t testing.TB, tool string, args ...string) string {
	t.Helper()
	return runTool(t, strings.Join(c.Endpoints(), ","), tool, args...)
}

func (c *Cluster) waitStatus(t testing.TB, m *Member, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(c.Status(m), want) {
			return
		}
		select {
		case <-m.proc.exited:
			t.Fatalf("ovsdb-server in %s exited: %v: %s", m.Dir, m.proc.err, m.proc.log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("member %s never reported %q: %s", m.Endpoint, want, c.Status(m))
}

// freePorts asks the kernel for n unused loopback ports. Another process could take one
// before the server binds it; on this test machine that is unlikely enough.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("reserve a loopback port: %v", err)
		}
		ls = append(ls, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}
