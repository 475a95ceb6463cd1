package podsim

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Churn runs pods through their whole life in a loop, one at a time, as a busy node's kubelet
// does: create the Pod, run its sandbox (CNI ADD), stop it (CNI DEL), delete the Pod. It counts
// what succeeded and keeps every failure.
type Churn struct {
	k        *Kubelet
	ns, name string

	mu       sync.Mutex
	adds     int
	dels     int
	addTimes []time.Duration
	failures []string
	progress chan struct{} // closed and replaced at each ADD that succeeds

	stop chan struct{}
	done chan struct{}
}

// ChurnStats is what a Churn counted.
type ChurnStats struct {
	Adds, Dels int
	MaxAdd     time.Duration // the slowest ADD that succeeded (one waiting out a restart)
	Failures   []string
}

// StartChurn starts the loop in namespace, pods named prefix-0, prefix-1, ...; ctx bounds
// every call.
func StartChurn(ctx context.Context, k *Kubelet, namespace, prefix string) *Churn {
	c := &Churn{k: k, ns: namespace, name: prefix, progress: make(chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{})}
	go c.run(ctx)
	return c
}

func (c *Churn) run(ctx context.Context) {
	defer close(c.done)
	for i := 0; ; i++ {
		select {
		case <-c.stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		c.cycle(ctx, fmt.Sprintf("%s-%d", c.name, i))
	}
}

// cycle is one pod's life.
func (c *Churn) cycle(ctx context.Context, name string) {
	pod, err := c.k.CreatePod(ctx, c.ns, name, nil)
	if err != nil {
		c.fail("create pod %s: %v", name, err)
		return
	}
	defer func() {
		if err := c.k.DeletePod(ctx, pod); err != nil {
			c.fail("delete pod %s: %v", name, err)
		}
	}()
	sb, err := c.k.RunSandbox(ctx, pod)
	if sb != nil {
		defer func() { _ = RemoveNetns(sb.Netns) }()
	}
	if err != nil {
		c.fail("ADD %s: %v", name, err)
		return
	}
	c.mu.Lock()
	c.adds++
	c.addTimes = append(c.addTimes, sb.AddTime)
	close(c.progress)
	c.progress = make(chan struct{})
	c.mu.Unlock()
	if err := c.k.StopSandbox(ctx, sb, true); err != nil {
		c.fail("DEL %s: %v", name, err)
		return
	}
	c.mu.Lock()
	c.dels++
	c.mu.Unlock()
}

func (c *Churn) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
}

// WaitAdds waits until n more ADDs have succeeded than when it was called, or ctx ends.
func (c *Churn) WaitAdds(ctx context.Context, n int) error {
	c.mu.Lock()
	target := c.adds + n
	c.mu.Unlock()
	for {
		c.mu.Lock()
		adds, next := c.adds, c.progress
		c.mu.Unlock()
		if adds >= target {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return fmt.Errorf("%d ADDs, waiting for %d: %w", adds, target, ctx.Err())
		}
	}
}

// Stop ends the loop after the pod in progress and returns the counts.
func (c *Churn) Stop() ChurnStats {
	close(c.stop)
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ChurnStats{Adds: c.adds, Dels: c.dels, Failures: append([]string(nil), c.failures...)}
	for _, d := range c.addTimes {
		st.MaxAdd = max(st.MaxAdd, d)
	}
	return st
}
