package queue

import (
	"context"
	"log/slog"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/metrics"
)

// Worker is how one queue's keys are processed.
type Worker struct {
	// Kind names the keys in logs and metrics ("pod", "service", ...).
	Kind string
	// Sync brings one key's object to its desired state; an error retries it with backoff.
	Sync    func(ctx context.Context, key string) error
	Log     *slog.Logger
	Metrics *metrics.Metrics // nil: none
}

// Work processes keys of q until it shuts down, retrying failures with backoff.
func Work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], w Worker) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		start := time.Now()
		err := w.Sync(ctx, key)
		q.Done(key)
		w.Metrics.ObserveReconcile(w.Kind, err)
		if err != nil {
			w.Log.Warn("sync "+w.Kind+", will retry", w.Kind, key, "err", err)
			q.AddRateLimited(key)
			continue
		}
		q.Forget(key)
		w.Log.Debug("synced "+w.Kind, w.Kind, key, "duration", time.Since(start))
	}
}

// Run processes keys of q (Work) until ctx ends, and shuts q down then: a feature's Run.
func Run(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], w Worker) {
	stop := context.AfterFunc(ctx, q.ShutDown)
	defer stop()
	Work(ctx, q, w)
}
