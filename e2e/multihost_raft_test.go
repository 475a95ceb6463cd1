package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestRaftMultiHost: three hosts with the OVN databases as raft clusters over them (no
// central OVN; ovn-northd on each, active/standby), edgeovn on each given every NB and SB
// member. Each host's ovn-remote is the whole SB member list; pods on the three hosts reach
// each other with ping and TCP, each port bound on its own host's chassis, a Geneve tunnel
// between every pair of hosts. Then a host added later (not a database member) boots as an
// agent host does, edgeovn given only its config file (node name, kubeconfig, the NB and SB
// member lists): it becomes ready, its ovn-remote is the SB list, and it serves a pod that
// reaches the others.
func TestRaftMultiHost(t *testing.T) {
	cl, ctx := startClusterWith(t, clusterSpec{hosts: 3, databases: harness.RaftDBs})
	checkOVNRemote(ctx, t, cl)
	var pods []placedPod
	for i, name := range []string{"a", "b", "c"} {
		pods = append(pods, placedPod{runPod(ctx, t, cl.hosts[i], name), i})
	}
	checkBindings(ctx, t, cl, pods)
	checkTunnels(ctx, t, cl)
	podMatrix(ctx, t, cl, pods)

	start := time.Now()
	h, err := cl.c.AddHost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	late := cl.bootFromConfigFile(ctx, t, h)
	if err := late.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("late host not ready: %v", err)
	}
	ready := time.Since(start)
	pods = append(pods, placedPod{runPod(ctx, t, late, "d"), len(cl.hosts) - 1})
	t.Logf("late host: ready %v after it was added, first pod wired %v after (under load)",
		ready.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	checkOVNRemote(ctx, t, cl)
	checkBindings(ctx, t, cl, pods)
	checkTunnels(ctx, t, cl)
	podMatrix(ctx, t, cl, pods)
}

// checkOVNRemote: edgeovn told each host's ovn-controller every SB member.
func checkOVNRemote(ctx context.Context, t *testing.T, cl *cluster) {
	t.Helper()
	want := cl.c.Central.SBEndpoint
	for i, h := range cl.hosts {
		out, err := h.rig.Run(ctx, "ovs-vsctl", "--db="+h.rig.OVSEndpoint, "get", "Open_vSwitch", ".", "external_ids:ovn-remote")
		if got := strings.Trim(strings.TrimSpace(string(out)), `"`); err != nil || got != want {
			t.Errorf("%s: ovn-remote %q (%v), want the SB members %q", cl.names[i], got, err, want)
		}
	}
}

// podMatrix: every pod reaches every other with ping and TCP.
func podMatrix(ctx context.Context, t *testing.T, cl *cluster, pods []placedPod) {
	t.Helper()
	for _, a := range pods {
		for _, b := range pods {
			if a.sb == b.sb {
				continue
			}
			what := fmt.Sprintf("pod %s (%s) -> pod %s (%s)", a.sb.Pod.Name, cl.names[a.host], b.sb.Pod.Name, cl.names[b.host])
			retryPing(ctx, t, a.sb, b.sb.IP(), what)
			if err := podsim.TCP(ctx, a.sb, b.sb); err != nil {
				t.Fatalf("tcp %s: %v", what, err)
			}
		}
	}
}

// TestRaftNBLeaderKilled: pods are created (and some deleted again) on all three hosts while
// the NB raft leader's ovsdb-server is SIGKILLed by its PID. Every CNI ADD succeeds; then no
// address is held twice among the pods' annotations or the NB ports, every live pod has its
// port with the address its annotation names, no deleted pod keeps one, and the killed
// member, restarted, rejoins and agrees.
func TestRaftNBLeaderKilled(t *testing.T) {
	cl, ctx := startClusterWith(t, clusterSpec{hosts: 3, databases: harness.RaftDBs})
	const perHost, killAt = 8, 6
	var created atomic.Int32
	killed := make(chan struct{})
	var (
		mu      sync.Mutex
		live    = map[string]*podsim.Sandbox{}
		deleted []string
		errs    []error
		wg      sync.WaitGroup
	)
	for i, e := range cl.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perHost {
				name := fmt.Sprintf("h%d-p%d", i+1, j)
				sb, del, err := churnPod(ctx, e, name, j%4 == 3)
				created.Add(1)
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err)
				case del:
					deleted = append(deleted, name)
				default:
					live[name] = sb
				}
				mu.Unlock()
			}
		}()
	}
	t.Cleanup(func() {
		for _, sb := range live {
			_ = podsim.RemoveNetns(sb.Netns)
		}
	})
	go func() {
		defer close(killed)
		for created.Load() < killAt && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		leader, err := cl.c.RaftLeader(ctx, harness.NB)
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		p, err := leader.Daemon(harness.DBServerName(harness.NB))
		if err == nil {
			err = p.Kill()
		}
		if err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			return
		}
		t.Logf("NB raft leader %s (pid %d) SIGKILLed after %d pods", leader.NodeIP, p.PID, created.Load())
		// Restart it after the churn: the others carry on with two of three.
		wg.Wait()
		if _, err := leader.RestartDaemon(ctx, harness.DBServerName(harness.NB)); err != nil {
			mu.Lock()
			errs = append(errs, fmt.Errorf("restart the killed NB member: %w", err))
			mu.Unlock()
		}
	}()
	wg.Wait()
	<-killed
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("churn with the NB leader killed: %v", err)
	}
	checkPodPorts(ctx, t, cl, live, deleted)
}

// churnPod creates a pod on e's host and runs its sandbox; with remove, it then stops the
// sandbox and deletes the pod, as a short-lived pod goes.
func churnPod(ctx context.Context, e *env, name string, remove bool) (*podsim.Sandbox, bool, error) {
	pod, err := e.kubelet.CreatePod(ctx, "default", name, nil)
	if err != nil {
		return nil, false, err
	}
	sb, err := e.kubelet.RunSandbox(ctx, pod)
	if err != nil {
		if sb != nil {
			_ = podsim.RemoveNetns(sb.Netns)
		}
		return nil, false, fmt.Errorf("pod %s: %w", name, err)
	}
	if !remove {
		return sb, false, nil
	}
	if err := e.kubelet.StopSandbox(ctx, sb, true); err != nil {
		return nil, false, fmt.Errorf("pod %s: %w", name, err)
	}
	return nil, true, e.kubelet.DeletePod(ctx, pod)
}

// checkPodPorts: no address twice among annotations or NB ports; every live pod has the port
// its annotation says; deleted pods' ports are gone; the restarted member agrees.
func checkPodPorts(ctx context.Context, t *testing.T, cl *cluster, live map[string]*podsim.Sandbox, deleted []string) {
	t.Helper()
	rig := cl.hosts[0].rig
	var ports map[string]netip.Addr
	eventually(ctx, t, "NB pod ports are exactly the live pods'", func() bool {
		ports = raftPortIPs(ctx, t, cl, "")
		return len(ports) == len(live) && !slices.ContainsFunc(deleted, func(n string) bool { _, ok := ports[n+".default"]; return ok })
	})
	annotated := podIPs(ctx, t, rig, "default")
	if dups := duplicates(annotated, ports); len(dups) > 0 {
		t.Errorf("addresses held twice: %v", dups)
	}
	for name, sb := range live {
		ann, port := annotated["default/"+name], ports[name+".default"]
		if !ann.IsValid() || ann != port || ann != sb.IP() {
			t.Errorf("pod %s: annotation %v, NB port %v, sandbox %v: want one address", name, ann, port, sb.IP())
		}
	}
	for _, m := range cl.c.RaftMembers() {
		eventually(ctx, t, "every NB member has the same pod ports", func() bool {
			return maps.Equal(raftPortIPs(ctx, t, cl, "unix:"+m.Dir+"/ovnnb_db.sock"), ports)
		})
	}
	t.Logf("%d live pods, %d deleted: each allocated once, each live pod with its port (under load)", len(live), len(deleted))
}

// raftPortIPs is each pod port's address in NB, read through the member list or, with db
// set, from one member (--no-leader-only: a follower's copy).
func raftPortIPs(ctx context.Context, t *testing.T, cl *cluster, db string) map[string]netip.Addr {
	t.Helper()
	args := []string{"--db=" + cl.c.Central.NBEndpoint}
	run := cl.c.Central.Run
	if db != "" {
		args = []string{"--db=" + db, "--no-leader-only"}
		for _, m := range cl.c.RaftMembers() {
			if strings.HasPrefix(db, "unix:"+m.Dir) {
				run = m.Run
			}
		}
	}
	args = append(args, "--format=csv", "--data=bare", "--no-headings", "--columns=name,addresses",
		"find", "Logical_Switch_Port", "external_ids:owner-kind=Pod")
	var out []byte
	var err error
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, err = run(ctx, "ovn-nbctl", args...); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("list pod ports: %v", err)
	}
	ports := map[string]netip.Addr{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, addrs, ok := strings.Cut(line, ",")
		if f := strings.Fields(addrs); ok && len(f) >= 2 {
			ip, err := netip.ParseAddr(f[1])
			if err != nil {
				t.Fatalf("port %s: addresses %q", name, addrs)
			}
			ports[name] = ip
		}
	}
	return ports
}
