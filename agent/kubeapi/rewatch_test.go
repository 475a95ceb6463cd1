package kubeapi

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// streams is a fake API server's watch: each open hands out the next scripted stream, and
// records the options it was opened with.
type streams struct {
	mu     sync.Mutex
	next   []func() (watch.Interface, error)
	opened []metav1.ListOptions
	lists  int
}

func (s *streams) open(_ context.Context, o metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened = append(s.opened, o)
	if len(s.next) == 0 {
		return watch.NewFake(), nil // stays open, no events
	}
	f := s.next[0]
	s.next = s.next[1:]
	return f()
}

func (s *streams) openedWith() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.opened...)
}

// closedAfter is a stream that delivers pods at the resource versions rvs and is then closed
// by the server.
func closedAfter(rvs ...string) func() (watch.Interface, error) {
	return func() (watch.Interface, error) {
		f := watch.NewFakeWithChanSize(len(rvs), false)
		for _, rv := range rvs {
			f.Add(pod(rv))
		}
		f.Stop()
		return f, nil
	}
}

func pod(rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p" + rv, Namespace: "ns", ResourceVersion: rv}}
}

func receive(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	var got []watch.Event
	for len(got) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("stream closed after %d of %d events", len(got), n)
			}
			got = append(got, ev)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d of %d events", len(got), n)
		}
	}
	return got
}

func waitClosed(t *testing.T, w watch.Interface) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Fatalf("stream not closed: got %v", ev.Type)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stream not closed")
	}
}

// A stream the server closes is re-opened from the last event's resource version with what is
// left of the timeout, and the caller sees the events of both in order on one stream.
func TestRewatchReopensWhereTheServerClosed(t *testing.T) {
	s := &streams{next: []func() (watch.Interface, error){closedAfter("11", "12"), closedAfter(), closedAfter("13")}}
	timeout := int64(300)
	w, err := Rewatch(t.Context(), metav1.ListOptions{ResourceVersion: "10", TimeoutSeconds: &timeout}, s.open)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got := receive(t, w, 3)
	for i, want := range []string{"11", "12", "13"} {
		if rv := got[i].Object.(*corev1.Pod).ResourceVersion; rv != want {
			t.Errorf("event %d: resource version %s, want %s", i, rv, want)
		}
	}
	opened := s.openedWith()
	if len(opened) < 3 {
		t.Fatalf("opened %d streams, want 3 or more", len(opened))
	}
	for i, want := range []string{"10", "12", "12"} {
		if opened[i].ResourceVersion != want {
			t.Errorf("stream %d opened at %q, want %q", i, opened[i].ResourceVersion, want)
		}
	}
	if left := *opened[1].TimeoutSeconds; left <= 0 || left > timeout {
		t.Errorf("re-opened with timeout %d s, want what is left of %d s", left, timeout)
	}
}

// An error event is handed on and ends the stream: nothing is re-opened after it.
func TestRewatchEndsAfterAnErrorEvent(t *testing.T) {
	gone := apierrors.NewResourceExpired("too old resource version").Status()
	s := &streams{next: []func() (watch.Interface, error){func() (watch.Interface, error) {
		f := watch.NewFakeWithChanSize(2, false)
		f.Add(pod("11"))
		f.Error(&gone)
		f.Stop()
		return f, nil
	}}}
	w, err := Rewatch(t.Context(), metav1.ListOptions{ResourceVersion: "10"}, s.open)
	if err != nil {
		t.Fatal(err)
	}
	got := receive(t, w, 2)
	if got[1].Type != watch.Error {
		t.Fatalf("second event %v, want the error", got[1].Type)
	}
	waitClosed(t, w)
	if n := len(s.openedWith()); n != 1 {
		t.Errorf("opened %d streams, want 1", n)
	}
}

// A re-open the server refuses with a status (410 Gone) reaches the caller as an error event,
// so the reflector lists again; the stream then ends.
func TestRewatchHandsOnAFailedReopen(t *testing.T) {
	s := &streams{next: []func() (watch.Interface, error){closedAfter("11"), func() (watch.Interface, error) {
		return nil, apierrors.NewResourceExpired("too old resource version")
	}}}
	w, err := Rewatch(t.Context(), metav1.ListOptions{ResourceVersion: "10"}, s.open)
	if err != nil {
		t.Fatal(err)
	}
	got := receive(t, w, 2)
	status, ok := got[1].Object.(*metav1.Status)
	if got[1].Type != watch.Error || !ok || status.Code != 410 {
		t.Fatalf("after the refused re-open: %v %#v, want a 410 error event", got[1].Type, got[1].Object)
	}
	waitClosed(t, w)
}

// Streams with no resource version to resume from are not wrapped; a refused first open is
// the caller's error.
func TestRewatchLeavesUnresumableStreams(t *testing.T) {
	for _, o := range []metav1.ListOptions{{}, {ResourceVersion: "0"}, {ResourceVersion: "5", SendInitialEvents: new(true)}} {
		f := watch.NewFake()
		w, err := Rewatch(t.Context(), o, func(context.Context, metav1.ListOptions) (watch.Interface, error) { return f, nil })
		if err != nil || w != f {
			t.Errorf("%+v: got %T, %v; want the stream itself", o, w, err)
		}
	}
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
	if _, err := Rewatch(t.Context(), metav1.ListOptions{ResourceVersion: "5"}, func(context.Context, metav1.ListOptions) (watch.Interface, error) {
		return nil, refused
	}); err != refused {
		t.Errorf("first open refused: got %v", err)
	}
}

// Stop ends the stream and the server's.
func TestRewatchStop(t *testing.T) {
	f := watch.NewFake()
	w, err := Rewatch(t.Context(), metav1.ListOptions{ResourceVersion: "10"}, func(context.Context, metav1.ListOptions) (watch.Interface, error) {
		return f, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	waitClosed(t, w)
	if !f.IsStopped() {
		t.Error("the server's stream was not stopped")
	}
}

// podsAPI is a fake pods API for an informer: its list counts, its watches are s's streams.
type podsAPI struct{ s *streams }

func (p podsAPI) List(context.Context, metav1.ListOptions) (*corev1.PodList, error) {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.s.lists++
	return &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}}, nil
}

func (p podsAPI) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	return p.s.open(ctx, o)
}

// An informer whose watch the server closes at once, before any event ("very short watch"),
// neither backs off nor lists everything again: it sees the next event from where it was.
// Without Rewatch client-go's reflector waits 0.8-1.6 s and lists again.
func TestInformerSurvivesAVeryShortWatch(t *testing.T) {
	s := &streams{next: []func() (watch.Interface, error){closedAfter(), closedAfter("11")}}
	inf := NewInformer(ListWatch[*corev1.PodList](podsAPI{s}, nil), &corev1.Pod{}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go inf.RunWithContext(ctx)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, _ := inf.GetStore().GetByKey("ns/p11"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the informer never saw the pod of the second stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists != 1 {
		t.Errorf("listed %d times, want 1 (the closed stream re-opened, not relisted)", s.lists)
	}
}
