package main

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/e2e/realpods"
)

// runningWatch records when each pod of a namespace is first seen Running. It watches the
// namespace from before the pods are created and watches again when the API server ends a
// watch (a busy one answers "Too large resource version" while its cache catches up): a
// watch without a resource version starts with every pod's current state, so nothing is
// missed, only seen a little late.
type runningWatch struct {
	want netip.Prefix

	mu      sync.Mutex
	seen    map[string]time.Time
	badAddr error
	changed chan struct{} // receives after each change, never blocks
}

func watchRunning(ctx context.Context, kube kubernetes.Interface, namespace string, want netip.Prefix) *runningWatch {
	rw := &runningWatch{want: want, seen: map[string]time.Time{}, changed: make(chan struct{}, 1)}
	go func() {
		for ctx.Err() == nil {
			w, err := kube.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{})
			if err == nil {
				rw.consume(w)
				w.Stop()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return rw
}

func (rw *runningWatch) consume(w watch.Interface) {
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return
		}
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || !realpods.Running(p) {
			continue
		}
		rw.mu.Lock()
		if _, dup := rw.seen[p.Name]; !dup {
			rw.seen[p.Name] = time.Now()
			if ip, err := realpods.IP(p); err != nil || !rw.want.Contains(ip) {
				rw.badAddr = fmt.Errorf("pod %s Running with address %q, not from %s: another network served it", p.Name, p.Status.PodIP, rw.want)
			}
		}
		rw.mu.Unlock()
		select {
		case rw.changed <- struct{}{}:
		default:
		}
	}
}

// wait returns when n pods were seen Running, with the time each was first seen.
func (rw *runningWatch) wait(ctx context.Context, n int) (map[string]time.Time, error) {
	for {
		rw.mu.Lock()
		seen, bad := len(rw.seen), rw.badAddr
		rw.mu.Unlock()
		if bad != nil {
			return nil, bad
		}
		if seen >= n {
			rw.mu.Lock()
			defer rw.mu.Unlock()
			return rw.seen, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d pods Running: %w", seen, n, ctx.Err())
		case <-rw.changed:
		}
	}
}
