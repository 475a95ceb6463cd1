package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// benchCluster is the raft-layout harness cluster with edgeovn and a simulated kubelet on
// each host.
type benchCluster struct {
	c        *harness.Cluster
	bin      string
	kubelets []*podsim.Kubelet
	netns    []string // pod namespaces to remove
}

// startCluster starts n hosts with NB and SB clustered over them and edgeovn on each, the
// same flags but the node name, and waits for each node's CNI STATUS.
func startCluster(ctx context.Context, bin string, n int, keep bool) (*benchCluster, error) {
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: n, Databases: harness.RaftDBs, Options: harness.Options{Keep: keep}})
	if err != nil {
		return nil, err
	}
	cl := &benchCluster{c: c, bin: bin}
	for _, h := range c.Hosts {
		if _, err := cl.startEdgeovn(ctx, h); err != nil {
			cl.stop()
			return nil, err
		}
	}
	for _, k := range cl.kubelets {
		if err := k.WaitReady(ctx); err != nil {
			cl.stop()
			return nil, fmt.Errorf("node %s: %w", k.Node, err)
		}
	}
	return cl, nil
}

// startEdgeovn starts edgeovn on h as the next node and registers the Node.
func (cl *benchCluster) startEdgeovn(ctx context.Context, h *harness.Rig) (*podsim.Kubelet, error) {
	node := fmt.Sprintf("edge-%d", len(cl.kubelets)+1)
	if _, err := daemon.Start(ctx, h, daemon.Spec{Node: node, BinDir: cl.bin}); err != nil {
		return nil, err
	}
	k := daemon.Kubelet(h, node)
	if err := k.EnsureNode(ctx); err != nil {
		return nil, err
	}
	cl.kubelets = append(cl.kubelets, k)
	return k, nil
}

func (cl *benchCluster) stop() {
	for _, ns := range cl.netns {
		_ = podsim.RemoveNetns(ns)
	}
	cl.c.Stop()
}

// runPod creates a pod on k's node and returns when its CNI ADD has replied.
func (cl *benchCluster) runPod(ctx context.Context, k *podsim.Kubelet, name string) error {
	pod, err := k.CreatePod(ctx, "default", name, nil)
	if err != nil {
		return err
	}
	sb, err := k.RunSandbox(ctx, pod)
	if sb != nil {
		cl.netns = append(cl.netns, sb.Netns)
	}
	return err
}

// steadyWindow is how long the writer commits undisturbed before each kill.
const steadyWindow = 3 * time.Second

// leaderKill SIGKILLs the NB raft leader's ovsdb-server by its PID while a pod is created
// on host run%3, times the writer's next commit and the pod's CNI ADD reply, then restarts
// the killed member and waits until it has rejoined.
func (cl *benchCluster) leaderKill(ctx context.Context, w *writer, run int, res *results) error {
	time.Sleep(steadyWindow)
	cs, err := w.commits()
	if err != nil {
		return err
	}
	for _, c := range cs {
		if time.Since(c.at) < steadyWindow {
			res.steady = append(res.steady, c.latency)
		}
	}
	leader, err := cl.c.RaftLeader(ctx, harness.NB)
	if err != nil {
		return err
	}
	p, err := leader.Daemon(harness.DBServerName(harness.NB))
	if err != nil {
		return err
	}
	killed := time.Now()
	if err := p.Kill(); err != nil {
		return err
	}
	fmt.Printf("run %d: NB leader %s (pid %d) killed at %s\n", run+1, leader.NodeIP, p.PID, killed.UTC().Format("15:04:05.000"))
	pod := make(chan error, 1)
	go func() {
		pod <- cl.runPod(ctx, cl.kubelets[run%len(cl.kubelets)], fmt.Sprintf("kill-%d", run+1))
	}()
	c, err := w.firstCommitAfter(ctx, killed, 60*time.Second)
	if err != nil {
		return err
	}
	res.toCommit = append(res.toCommit, c.at.Sub(killed))
	if err := <-pod; err != nil {
		return fmt.Errorf("pod at the kill: %w", err)
	}
	res.toPod = append(res.toPod, time.Since(killed))
	if _, err := leader.RestartDaemon(ctx, harness.DBServerName(harness.NB)); err != nil {
		return err
	}
	return waitMember(ctx, leader)
}

// waitMember waits until the restarted NB server is a cluster member again.
func waitMember(ctx context.Context, h *harness.Rig) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := h.RaftStatus(ctx, harness.NB)
		if err == nil && strings.Contains(st, "Status: cluster member") && strings.Contains(st, "Leader: ") && !strings.Contains(st, "Leader: unknown") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("NB member %s has not rejoined: %v\n%s", h.NodeIP, err, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// newHost adds a host (not a database member) and times it up, its edgeovn ready and its
// first pod wired.
func (cl *benchCluster) newHost(ctx context.Context, run int, res *results) error {
	start := time.Now()
	h, err := cl.c.AddHost(ctx)
	if err != nil {
		return err
	}
	res.hostUp = append(res.hostUp, time.Since(start))
	k, err := cl.startEdgeovn(ctx, h)
	if err != nil {
		return err
	}
	if err := k.WaitReady(ctx); err != nil {
		return fmt.Errorf("node %s: %w", k.Node, err)
	}
	res.hostReady = append(res.hostReady, time.Since(start))
	if err := cl.runPod(ctx, k, fmt.Sprintf("new-%d", run+1)); err != nil {
		return err
	}
	res.hostPod = append(res.hostPod, time.Since(start))
	return nil
}
