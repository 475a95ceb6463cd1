package kubeapi

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// WatchFunc opens one watch stream.
type WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// Rewatch opens a watch that outlives the API server closing its stream early.
//
// kube-apiserver closes a watcher whose events it cannot hand over fast enough ("Forcing
// watcher close due to unresponsiveness", counted in apiserver_terminated_watchers_total): on
// a two-core host, a burst of pod creates does it to every pod watch, ten to twenty-five
// times in a 500-pod burst. client-go's reflector re-watches from its resource version when
// such a stream had delivered an event, but when it closes within a second with none
// delivered ("very short watch") the reflector backs off 0.8-1.6 s and lists everything
// again: the controller stood still for a second in one burst of three.
//
// So the stream here is re-opened at once from the resource version of the last event handed
// on, until the timeout the caller asked for (the reflector's random 5-10 minutes) has passed,
// the caller stops it or ctx ends; the caller sees one stream. Re-opening from a resource
// version is what the reflector does itself after a close, so no event is lost or repeated.
// An error event ends the stream as before (a 410 Gone makes the reflector list again), and
// so does a failure to re-open (an API status is handed on as an error event). A watch with
// no resource version to resume from (none given, "0", or the streaming list's initial
// events) is returned as it is.
func Rewatch(ctx context.Context, opts metav1.ListOptions, open WatchFunc) (watch.Interface, error) {
	w, err := open(ctx, opts)
	if err != nil || !resumable(opts) {
		return w, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &rewatch{open: open, opts: opts, result: make(chan watch.Event), cancel: cancel}
	if opts.TimeoutSeconds != nil {
		r.deadline = time.Now().Add(time.Duration(*opts.TimeoutSeconds) * time.Second)
	}
	go r.run(ctx, w)
	return r, nil
}

// resumable says whether a stream opened with opts can be re-opened where it ended.
func resumable(opts metav1.ListOptions) bool {
	return opts.ResourceVersion != "" && opts.ResourceVersion != "0" && opts.SendInitialEvents == nil
}

type rewatch struct {
	open     WatchFunc
	opts     metav1.ListOptions // of the first stream; ResourceVersion follows the events
	deadline time.Time          // zero: none
	result   chan watch.Event
	cancel   context.CancelFunc
	stopOnce sync.Once
}

func (r *rewatch) ResultChan() <-chan watch.Event { return r.result }

func (r *rewatch) Stop() { r.stopOnce.Do(r.cancel) }

// run hands on the events of w and of each stream re-opened after it, until one ends for good.
func (r *rewatch) run(ctx context.Context, w watch.Interface) {
	defer close(r.result)
	for {
		ended := r.relay(ctx, w)
		w.Stop()
		if ended || ctx.Err() != nil || r.expired() {
			return
		}
		next, err := r.open(ctx, r.reopenOptions())
		if err != nil {
			r.handOnError(ctx, err)
			return
		}
		w = next
	}
}

// relay hands on w's events until its stream closes; true when the stream must not be re-opened
// (an error event handed on, or ctx ended).
func (r *rewatch) relay(ctx context.Context, w watch.Interface) bool {
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return true
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			return false
		}
		if ev.Type != watch.Error {
			if m, err := meta.Accessor(ev.Object); err == nil && m.GetResourceVersion() != "" {
				r.opts.ResourceVersion = m.GetResourceVersion()
			}
		}
		select {
		case <-ctx.Done():
			return true
		case r.result <- ev:
		}
		if ev.Type == watch.Error {
			return true
		}
	}
}

// expired says whether the caller's timeout has passed.
func (r *rewatch) expired() bool { return !r.deadline.IsZero() && !time.Now().Before(r.deadline) }

// reopenOptions are the first stream's options from the last resource version handed on, with
// what is left of the timeout.
func (r *rewatch) reopenOptions() metav1.ListOptions {
	o := r.opts
	if !r.deadline.IsZero() {
		left := int64(math.Ceil(time.Until(r.deadline).Seconds()))
		o.TimeoutSeconds = &left
	}
	return o
}

// handOnError passes a failed re-open's API status (a 410 Gone: the reflector lists again) to
// the caller as an error event; other errors just end the stream.
func (r *rewatch) handOnError(ctx context.Context, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return
	}
	s := status.Status()
	select {
	case <-ctx.Done():
	case r.result <- watch.Event{Type: watch.Error, Object: &s}:
	}
}
