package harness

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReadyCondition returns the Node's Ready condition as the kubelet last reported it.
func (n *RealNode) ReadyCondition(ctx context.Context) (corev1.NodeCondition, error) {
	node, err := n.rig.kube.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return corev1.NodeCondition{}, fmt.Errorf("get node %s: %w", n.Name, err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c, nil
		}
	}
	return corev1.NodeCondition{}, fmt.Errorf("node %s reports no Ready condition yet", n.Name)
}

// WaitReady waits until the Node's Ready condition has the status want and returns it.
func (n *RealNode) WaitReady(ctx context.Context, want corev1.ConditionStatus) (corev1.NodeCondition, error) {
	for {
		c, err := n.ReadyCondition(ctx)
		if err == nil && c.Status == want {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return c, fmt.Errorf("node %s: Ready is not %s (last: %s %s %q, %v): %w", n.Name, want, c.Status, c.Reason, c.Message, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
