package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// restartSample is one restart of edgeovn, as systemctl restart does it: SIGTERM, wait for the
// exit, start again.
type restartSample struct {
	stop         time.Duration // SIGTERM to exit
	status       time.Duration // start to CNI STATUS passing (what containerd asks)
	ready        time.Duration // start to the Node Ready again, as the kubelet reports it
	wentNotReady bool          // the kubelet saw the node NotReady meanwhile
}

func (b *bench) restarts(ctx context.Context) ([]restartSample, error) {
	var out []restartSample
	for range b.cfg.restarts {
		s, err := b.restart(ctx)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (b *bench) restart(ctx context.Context) (restartSample, error) {
	var s restartSample
	old, err := b.rig.Daemon("edgeovn")
	if err != nil {
		return s, err
	}
	before := time.Now()
	if err := old.Stop(); err != nil {
		return s, err
	}
	s.stop = time.Since(before)
	start := time.Now()
	if _, err := daemon.Start(ctx, b.rig, b.daemon); err != nil {
		return s, err
	}
	if err := daemon.Kubelet(b.rig, nodeName).WaitReady(ctx); err != nil {
		return s, err
	}
	s.status = time.Since(start)
	c, err := b.readyAfter(ctx, before)
	if err != nil {
		return s, err
	}
	s.ready = time.Since(start)
	s.wentNotReady = c.LastTransitionTime.After(before)
	return s, nil
}

// readyAfter waits until the Node is Ready and the kubelet has written its status since t
// (a Ready condition from before the restart proves nothing).
func (b *bench) readyAfter(ctx context.Context, t time.Time) (corev1.NodeCondition, error) {
	for {
		n, err := b.rig.Kube().CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err == nil {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && c.LastHeartbeatTime.After(t) {
					return c, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return corev1.NodeCondition{}, fmt.Errorf("node %s not Ready after the restart: %w", nodeName, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func printRestarts(rs []restartSample) {
	fmt.Printf("\nedgeovn restarted (SIGTERM, exit, start) while the node runs, %d times\n\n", len(rs))
	fmt.Println("| restart | stop | start to CNI STATUS ok | start to node Ready reported | node went NotReady |")
	fmt.Println("|---|---:|---:|---:|---|")
	for i, s := range rs {
		fmt.Printf("| %d | %s | %s | %s | %t |\n", i+1, benchkit.Ms(s.stop), benchkit.Ms(s.status), benchkit.Ms(s.ready), s.wentNotReady)
	}
}
