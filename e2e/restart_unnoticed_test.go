package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestRestartsUnnoticed restarts edgeovn 10 times, alternately with SIGTERM (systemctl
// restart) and SIGKILL (a crash), under the systemd the harness plays: edgeovn.socket holds
// the CNI socket across the restarts and passes it to each start. Meanwhile two pods ping each
// other every 10 ms and pods are created and deleted in a loop (CNI ADD and DEL one after the
// other, each restart met by some). No ping may be lost and no ADD or DEL fail: a call made
// while edgeovn is down waits in the socket's queue, one in flight at a SIGTERM is finished,
// one in flight at a SIGKILL is resent by the plugin. Then each kind of restart again on a
// quiet node, counting the write transactions the northbound and Open_vSwitch databases logged
// for it (goal: none, edgeovn finds everything as it left it).
func TestRestartsUnnoticed(t *testing.T) {
	env := startEnvWith(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := env.kubelet.EnsureNode(ctx); err != nil {
		t.Fatal(err)
	}
	a, b := runPod(ctx, t, env, "ping-a"), runPod(ctx, t, env, "ping-b")
	nodeJoin(ctx, t, env)
	eventually(ctx, t, "ovn0 bound", func() bool { return daemon.HostInterfaceBound(ctx, env.rig) })
	if out, err := podsim.Ping(ctx, a, b.IP()); err != nil {
		t.Fatalf("pods do not reach each other before the restarts: %v\n%s", err, out)
	}
	sock := socketInode(t, env)
	pingers, pingStart := startPingers(t, a, b), time.Now()
	churn := podsim.StartChurn(ctx, env.kubelet, "default", "churn")
	if err := churn.WaitAdds(ctx, 1); err != nil {
		t.Fatalf("churn: %v\n%s", err, env.daemonLog())
	}
	for i := range 10 {
		sig := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}[i%2]
		r, err := env.sd.Restart(ctx, sig, fmt.Sprintf("edgeovn-%d", i+1))
		env.daemon = env.sd.Proc
		if err != nil {
			t.Fatalf("restart %d (%v): %v\n%s", i+1, sig, err, env.daemonLog())
		}
		t.Logf("restart %d (%v): stopped in %v, READY=1 %v after the start (main after %v, then %v)", i+1, sig,
			r.Stop.Round(time.Millisecond), r.ToReady.Round(time.Millisecond), r.ToMain.Round(time.Millisecond), r.Phases.Marks)
		if _, ok := r.Phases.At("ready"); !ok { // what restartbench splits the start with
			t.Errorf("restart %d: no \"startup phases\" record ending with ready before READY=1 in %s", i+1, env.sd.Proc.Log)
		}
		if err := churn.WaitAdds(ctx, 2); err != nil { // the new daemon serves the loop
			t.Fatalf("after restart %d: %v\n%s", i+1, err, env.daemonLog())
		}
	}
	if got := socketInode(t, env); got != sock {
		t.Errorf("the CNI socket was replaced across the restarts (inode %d, then %d): not held as edgeovn.socket holds it", sock, got)
	}
	if n := strings.Count(env.daemonLog(), "cni socket passed by systemd"); n != 1 {
		t.Errorf("the last edgeovn logged %d times that it serves the socket systemd passed, want 1", n)
	}
	st := churn.Stop()
	t.Logf("pod loop: %d ADDs, %d DELs, slowest ADD %v (one waiting out a restart)", st.Adds, st.Dels, st.MaxAdd.Round(time.Millisecond))
	for _, f := range st.Failures {
		t.Errorf("failed across the restarts: %s", f)
	}
	// The pingers ran through every restart: at least half the requests their 10 ms ticker
	// could send in that time (a busy machine drops ticks, never requests it sent).
	pinged := time.Since(pingStart)
	for dir, ps := range pingers.stop() {
		t.Logf("ping %s: %d sent, %d answered in %v", dir, ps.Sent, ps.Received, pinged.Round(time.Millisecond))
		if len(ps.Lost) > 0 {
			t.Errorf("ping %s: %d of %d lost (sequence numbers %v)", dir, len(ps.Lost), ps.Sent, ps.Lost)
		}
		if want := int(pinged / (20 * time.Millisecond)); ps.Sent < want {
			t.Errorf("ping %s: only %d requests sent in %v (want at least %d): the pinger did not run through the restarts", dir, ps.Sent, pinged, want)
		}
	}
	checkCountsWrites(t, env, st.Adds)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		w, err := env.sd.RestartWrites(ctx, sig, "edgeovn-quiet-"+strings.ToLower(sig.String()[:4]))
		env.daemon = env.sd.Proc
		if err != nil {
			t.Fatalf("restart with %v: %v\n%s", sig, err, env.daemonLog())
		}
		t.Logf("a restart with %v wrote %d northbound and %d Open_vSwitch transactions", sig, len(w.NB), len(w.OVS))
		for _, tx := range append(w.NB, w.OVS...) {
			t.Errorf("restart with %v wrote: %s", sig, tx.Raw)
		}
	}
}

// checkCountsWrites: the count reads the databases' logs for real: each ADD of the loop
// logged its port in both (so a count of none after a restart means none).
func checkCountsWrites(t *testing.T, env *env, adds int) {
	t.Helper()
	for db, table := range map[string]string{harness.NBDatabase: "Logical_Switch_Port", harness.OVSDatabase: "Interface"} {
		txs, err := env.rig.Transactions(db)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tx := range txs {
			if slices.Contains(tx.Tables, table) {
				n++
			}
		}
		if n < adds {
			t.Fatalf("database %s logged %d transactions on %s for %d ADDs: the count cannot see writes", db, n, table, adds)
		}
	}
}

func socketInode(t *testing.T, env *env) uint64 {
	t.Helper()
	fi, err := os.Stat(daemon.Socket(env.rig))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// pingPair pings both ways between two pods.
type pingPair map[string]*podsim.Pinger

func startPingers(t *testing.T, a, b *podsim.Sandbox) pingPair {
	t.Helper()
	p := pingPair{}
	for _, c := range [][2]*podsim.Sandbox{{a, b}, {b, a}} {
		pg, err := podsim.StartPinger(c[0], c[1].IP(), 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		p[c[0].Pod.Name+" -> "+c[1].Pod.Name] = pg
	}
	t.Cleanup(func() { p.stop() })
	return p
}

// stop stops the pingers (once) and returns their counts.
func (p pingPair) stop() map[string]podsim.PingStats {
	out := map[string]podsim.PingStats{}
	for dir, pg := range p {
		out[dir] = pg.Stop()
		delete(p, dir)
	}
	return out
}
