package ctltest

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// Watches counts the watches a fake client has registered, by resource. A fake's watch sees
// only the changes made after it was registered (it has no resource versions to resume
// from), so a test that changes an object for an informer to see waits for the informer's
// watch first (Wait), not only for its initial list.
type Watches struct {
	mu      sync.Mutex
	n       map[string]int
	changed chan struct{} // closed and replaced at each registration
}

// watchable is a fake client (typed or dynamic) whose watches go through its tracker.
type watchable interface {
	PrependWatchReactor(resource string, reaction k8stesting.WatchReactionFunc)
	Tracker() k8stesting.ObjectTracker
}

// countWatches registers each of f's watches with its tracker, as the fake's own reactor
// does, and counts them once registered.
func countWatches(f watchable) *Watches {
	w := &Watches{n: map[string]int{}, changed: make(chan struct{})}
	f.PrependWatchReactor("*", func(action k8stesting.Action) (bool, watch.Interface, error) {
		wa, ok := action.(k8stesting.WatchActionImpl)
		if !ok {
			return false, nil, nil
		}
		iface, err := f.Tracker().Watch(wa.GetResource(), wa.GetNamespace(), wa.ListOptions)
		if err == nil {
			w.mu.Lock()
			w.n[wa.GetResource().Resource]++
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
		}
		return true, iface, err
	})
	return w
}

// Wait waits until resource ("pods", "subnets") has a registered watch.
func (w *Watches) Wait(ctx context.Context, resource string) error {
	for {
		w.mu.Lock()
		n, changed := w.n[resource], w.changed
		w.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no watch of %s registered: %w", resource, ctx.Err())
		case <-changed:
		}
	}
}

// Count is how many watches of resource have been registered so far.
func (w *Watches) Count(resource string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[resource]
}
