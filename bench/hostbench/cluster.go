package main

import (
	"context"
	"fmt"

	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// benchCluster is the harness cluster with edgeovn and a simulated kubelet on each host.
type benchCluster struct {
	c        *harness.Cluster
	kubelets []*podsim.Kubelet
}

// startCluster starts n hosts and edgeovn on each, the same flags but the node name, and
// waits for each node's CNI STATUS.
func startCluster(ctx context.Context, bin string, n int) (*benchCluster, error) {
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: n})
	if err != nil {
		return nil, err
	}
	cl := &benchCluster{c: c}
	for i, h := range c.Hosts {
		node := fmt.Sprintf("edge-%d", i+1)
		if _, err := daemon.Start(ctx, h, daemon.Spec{Node: node, BinDir: bin}); err != nil {
			c.Stop()
			return nil, err
		}
		k := daemon.Kubelet(h, node)
		if err := k.EnsureNode(ctx); err != nil {
			c.Stop()
			return nil, err
		}
		cl.kubelets = append(cl.kubelets, k)
	}
	for _, k := range cl.kubelets {
		if err := k.WaitReady(ctx); err != nil {
			c.Stop()
			return nil, fmt.Errorf("node %s: %w", k.Node, err)
		}
	}
	return cl, nil
}

// pods runs a1 and a2 on the first host and b on the second.
func (cl *benchCluster) pods(ctx context.Context) (a1, a2, b *podsim.Sandbox, err error) {
	var sbs []*podsim.Sandbox
	for _, p := range []struct {
		name string
		host int
	}{{"a1", 0}, {"a2", 0}, {"b", 1}} {
		k := cl.kubelets[p.host]
		pod, err := k.CreatePod(ctx, "default", p.name, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		sb, err := k.RunSandbox(ctx, pod)
		if err != nil {
			return nil, nil, nil, err
		}
		sbs = append(sbs, sb)
	}
	return sbs[0], sbs[1], sbs[2], nil
}
