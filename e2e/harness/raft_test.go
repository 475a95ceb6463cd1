package harness

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestClusterRaft is the raft layout's self-test: NB and SB each a three-member raft
// cluster on the hosts' underlay addresses, ovn-northd on each member with exactly one
// active; pods on three hosts (ovn-remote the SB member list) ping each other; the NB leader
// SIGKILLed by PID, another member takes over and a write through the member list commits;
// the killed member restarted rejoins; a host added later binds a pod that reaches the
// others; and Close leaves nothing behind.
func TestClusterRaft(t *testing.T) {
	if err := PreflightCluster(); err != nil {
		skip.Now(t, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	c, err := StartCluster(ctx, ClusterOptions{Hosts: 3, Databases: RaftDBs})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	t.Cleanup(c.Stop)
	t.Logf("raft cluster of %d hosts up in %v (under load)", len(c.Hosts), time.Since(start).Round(time.Millisecond))
	checkRaftMembers(t, ctx, c)
	checkOneActiveNorthd(t, ctx, c)

	run(t, ctx, c.Central, "ovn-nbctl", "--db="+c.Central.NBEndpoint, "ls-add", "sw0")
	var pods []testPod
	for i, h := range c.Hosts {
		pods = append(pods, startRaftPod(t, ctx, h, i))
	}
	pingAll(t, ctx, pods)

	leader, err := c.RaftLeader(ctx, NB)
	if err != nil {
		t.Fatal(err)
	}
	p, err := leader.Daemon(DBServerName(NB))
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	// ovn-nbctl tries one member, picked at random, and fails if that is the dead one: retry.
	waitFor(t, ctx, "a write through the NB member list", func() error {
		_, err := c.Central.Run(ctx, "ovn-nbctl", "--db="+c.Central.NBEndpoint, "--timeout=5", "--may-exist", "ls-add", "sw1")
		return err
	})
	t.Logf("NB leader %s killed; next write committed after %v (under load)", leader.NodeIP, time.Since(killed).Round(time.Millisecond))
	next, err := c.RaftLeader(ctx, NB)
	if err != nil || next == leader {
		t.Fatalf("after killing the NB leader %s: leader %v, err %v", leader.NodeIP, next, err)
	}
	if _, err := leader.RestartDaemon(ctx, DBServerName(NB)); err != nil {
		t.Fatal(err)
	}
	if err := leader.waitRaftMember(ctx, raftNB); err != nil {
		t.Fatalf("killed member did not rejoin: %v", err)
	}
	if out := run(t, ctx, leader, "ovn-nbctl", "--db="+leader.NBEndpoint, "--no-leader-only", "ls-list"); !strings.Contains(out, "sw1") {
		t.Errorf("restarted member has not caught up: ls-list = %q", out)
	}

	late, err := c.AddHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pods = append(pods, startRaftPod(t, ctx, late, len(c.Hosts)-1))
	pingAll(t, ctx, pods)
	// central: etcd, kube-apiserver; each host: its three; each member: nb, sb, northd;
	// and the restarted NB server.
	assertClusterTeardown(t, c, 2+3*len(c.Hosts)+3*3+1)
}

// startRaftPod makes host i a chassis and starts its pod on sw0.
func startRaftPod(t *testing.T, ctx context.Context, h *Rig, i int) testPod {
	t.Helper()
	configureChassisAs(t, ctx, h, fmt.Sprintf("host-%d", i+1), h.NodeIP.String())
	p := testPod{name: fmt.Sprintf("p%d", i+1), mac: fmt.Sprintf("0a:58:0a:2a:00:%02x", i+10),
		ip: fmt.Sprintf("10.42.0.%d", i+10), netns: fmt.Sprintf("%s-p%d", h.Netns, i+1)}
	addPod(t, ctx, h, p)
	waitOVNInstalled(t, ctx, h, p)
	return p
}

func pingAll(t *testing.T, ctx context.Context, pods []testPod) {
	t.Helper()
	for _, a := range pods {
		for _, b := range pods {
			if a == b {
				continue
			}
			if out, err := runInPod(ctx, a, "ping", "-c", "2", "-w", "10", b.ip); err != nil {
				t.Fatalf("ping %s -> %s (%s): %v\n%s", a.name, b.name, b.ip, err, out)
			}
		}
	}
}

// checkRaftMembers: every member of both databases sees three servers and one leader.
func checkRaftMembers(t *testing.T, ctx context.Context, c *Cluster) {
	t.Helper()
	if n := len(c.RaftMembers()); n != 3 {
		t.Fatalf("%d raft members, want 3", n)
	}
	for _, db := range []DB{NB, SB} {
		if _, err := c.RaftLeader(ctx, db); err != nil {
			t.Fatal(err)
		}
		for _, h := range c.RaftMembers() {
			st, err := h.RaftStatus(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(st, " at tcp:"); n != 3 {
				t.Errorf("%s member %s lists %d servers, want 3:\n%s", db, h.NodeIP, n, st)
			}
		}
	}
	if _, err := c.Hosts[0].RaftStatus(ctx, "xx"); err == nil {
		t.Error("raft status of database xx: no error")
	}
}

// checkOneActiveNorthd: northd runs on every member, active on exactly one (the SB lock).
func checkOneActiveNorthd(t *testing.T, ctx context.Context, c *Cluster) {
	t.Helper()
	waitFor(t, ctx, "exactly one active ovn-northd", func() error {
		var active []string
		for _, h := range c.RaftMembers() {
			out, err := h.Run(ctx, "ovs-appctl", "-t", h.path("ovn-northd.ctl"), "status")
			if err != nil {
				return err
			}
			if strings.Contains(string(out), "active") {
				active = append(active, h.NodeIP.String())
			}
		}
		if len(active) != 1 {
			return fmt.Errorf("active northd on %v", active)
		}
		return nil
	})
}
