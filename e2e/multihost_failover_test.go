package e2e

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestRaftControllerHostKilled: three hosts with raft NB/SB; while pods are created on every
// host, the controller's host dies: its edgeovn SIGKILLed, then every other process of that
// host (ovn-controller, ovs-vswitchd, its NB and SB raft members, ovn-northd), each by PID.
// Another host takes the Lease; every pod on the surviving hosts gets its network, no address
// is held twice among the annotations or the NB ports, each surviving pod's port carries its
// annotated address; and two pods on the surviving hosts, pinging each other every 10 ms
// throughout, never go a second without a reply.
func TestRaftControllerHostKilled(t *testing.T) {
	cl, ctx := startClusterWith(t, clusterSpec{hosts: 3, databases: harness.RaftDBs})
	dead := leaderHost(ctx, t, cl)
	var survivors []*env
	for _, e := range cl.hosts {
		if e != dead {
			survivors = append(survivors, e)
		}
	}
	a, b := runPod(ctx, t, survivors[0], "ping-a"), runPod(ctx, t, survivors[1], "ping-b")
	retryPing(ctx, t, a, b.IP(), "ping-a -> ping-b")
	pingers := startPingers(t, a, b)

	const perHost, killAt = 6, 4
	var (
		created atomic.Int32
		mu      sync.Mutex
		live    = map[string]*podsim.Sandbox{"ping-a": a, "ping-b": b}
		errs    []error
		wg      sync.WaitGroup
	)
	// The dead host's kubelet stops with it: its calls end at the kill.
	deadCtx, stopDead := context.WithCancel(ctx)
	defer stopDead()
	for i, e := range cl.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hctx := ctx
			if e == dead {
				hctx = deadCtx
			}
			for j := range perHost {
				if hctx.Err() != nil {
					return
				}
				name := fmt.Sprintf("h%d-p%d", i+1, j)
				sb, _, err := churnPod(hctx, e, name, false)
				created.Add(1)
				mu.Lock()
				switch {
				case e == dead: // its pods may or may not get their network: the host is gone
					if sb != nil {
						_ = podsim.RemoveNetns(sb.Netns)
					}
				case err != nil:
					errs = append(errs, err)
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
	for created.Load() < killAt {
		time.Sleep(20 * time.Millisecond)
	}
	killed := time.Now()
	stopDead()
	if err := dead.daemon.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := dead.rig.KillAll(); err != nil {
		t.Fatal(err)
	}
	t.Logf("controller host %s: edgeovn SIGKILLed after %d pods, then all its processes", dead.kubelet.Node, created.Load())
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("pods on the surviving hosts: %v", err)
	}
	next := leaderHost(ctx, t, cl)
	if next == dead {
		t.Fatalf("the Lease is still with the dead host %s", dead.kubelet.Node)
	}
	t.Logf("Lease with %s; all pods on the surviving hosts wired %v after the kill (under load)",
		next.kubelet.Node, time.Since(killed).Round(time.Millisecond))
	checkSurvivorPorts(t, cl, survivors[0], live)
	for dir, st := range pingers.stop() {
		longest := st.Longest()
		t.Logf("%s: %d sent, %d lost, longest outage %v (%d pings)", dir, st.Sent, len(st.Lost), longest.Duration(), longest.Lost)
		for _, o := range st.Outages {
			t.Logf("%s: %d lost from %v to %v after the kill", dir, o.Lost, o.From.Sub(killed).Round(time.Millisecond), o.To.Sub(killed).Round(time.Millisecond))
		}
		if longest.Duration() > time.Second {
			t.Errorf("%s: no reply for %v (%d pings in a row lost)", dir, longest.Duration(), longest.Lost)
		}
	}
}

// checkSurvivorPorts: each address once among annotations and NB ports; each live pod's port
// holds the address its annotation and its sandbox have.
func checkSurvivorPorts(t *testing.T, cl *cluster, via *env, live map[string]*podsim.Sandbox) {
	t.Helper()
	ctx := t.Context()
	ports := raftPortIPs(ctx, t, cl, "")
	annotated := podIPs(ctx, t, via.rig, "default")
	if dups := duplicates(annotated, ports); len(dups) > 0 {
		t.Errorf("addresses held twice: %v", dups)
	}
	for name, sb := range live {
		ann, port := annotated["default/"+name], ports[name+".default"]
		if !ann.IsValid() || ann != port || ann != sb.IP() {
			t.Errorf("pod %s: annotation %v, NB port %v, sandbox %v: want one address", name, ann, port, sb.IP())
		}
	}
}
