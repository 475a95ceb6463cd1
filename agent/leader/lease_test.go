package leader

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// fakeClock is the elector's clock in tests of its rules, stepped by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time       { return c.t }
func (c *fakeClock) step(d time.Duration) { c.t = c.t.Add(d) }

// leaseRig is a fake API server holding one Lease, and host-a's elector for it.
type leaseRig struct {
	kube   *fake.Clientset
	leases LeaseClient
	clock  *fakeClock
	el     *leaseElector
	log    *bytes.Buffer
}

func newLeaseRig(t *testing.T) *leaseRig {
	t.Helper()
	kube := fake.NewClientset()
	cfg := fastLease()
	leases := kube.CoordinationV1().Leases(cfg.LeaseNamespace)
	var buf bytes.Buffer
	el, err := newLeaseElector(cfg, leases, slog.New(slog.NewTextHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	el.now = clock.now
	return &leaseRig{kube: kube, leases: leases, clock: clock, el: el, log: &buf}
}

// put writes the Lease as another host would, creating it the first time.
func (r *leaseRig) put(t *testing.T, rec leaseRecord) {
	t.Helper()
	ctx := t.Context()
	l, err := r.leases.Get(ctx, r.el.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: r.el.namespace, Name: r.el.name, ResourceVersion: "42"}, Spec: rec.spec()}
		_, err = r.leases.Create(ctx, l, metav1.CreateOptions{})
	} else if err == nil {
		l.Spec = rec.spec()
		_, err = r.leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("write lease: %v", err)
	}
}

func (r *leaseRig) get(t *testing.T) leaseRecord {
	t.Helper()
	l, err := r.leases.Get(t.Context(), r.el.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	return recordOf(l.Spec)
}

// try makes one attempt and fails the test on an error.
func (r *leaseRig) try(t *testing.T) bool {
	t.Helper()
	ok, err := r.el.tryAcquireOrRenew(t.Context())
	r.el.report()
	if err != nil {
		t.Fatalf("attempt: %v", err)
	}
	return ok
}

// A Lease another host keeps renewing is never taken, however old the times it writes (its
// clock is not this host's) and however long it has been held.
func TestLeaseRenewedElsewhereNotTaken(t *testing.T) {
	r := newLeaseRig(t)
	past := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	held := leaseRecord{holder: "host-b", seconds: 10, acquired: past, renewed: past, transitions: 3}
	r.put(t, held)
	for i := range 5 {
		if r.try(t) {
			t.Fatalf("attempt %d took a Lease host-b renewed %v ago", i, 9*time.Second)
		}
		r.clock.step(9 * time.Second)
		held.renewed = held.renewed.Add(time.Second)
		r.put(t, held)
	}
	if got := r.get(t); got.holder != "host-b" || got.transitions != 3 {
		t.Errorf("lease %+v, want still host-b's", got)
	}
	if n := strings.Count(r.log.String(), "controller role held elsewhere"); n != 1 {
		t.Errorf("%q logged %d times, want once:\n%s", "controller role held elsewhere", n, r.log)
	}
}

// A Lease whose record this host saw unchanged for longer than its duration is taken, even
// with a renew time in this host's future; the transitions count one more, and renewing
// keeps the acquire time.
func TestLeaseExpiredElsewhereTaken(t *testing.T) {
	r := newLeaseRig(t)
	future := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	r.put(t, leaseRecord{holder: "host-b", seconds: 10, acquired: future, renewed: future, transitions: 3})
	if r.try(t) {
		t.Fatal("took a Lease at first sight")
	}
	r.clock.step(9 * time.Second)
	if r.try(t) {
		t.Fatal("took a Lease unchanged for 9 s of its 10")
	}
	r.clock.step(2 * time.Second)
	if !r.try(t) {
		t.Fatal("did not take a Lease unchanged for 11 s of its 10")
	}
	taken := r.clock.now()
	got := r.get(t)
	if got.holder != "host-a" || got.transitions != 4 || !got.acquired.Equal(taken) || got.seconds != 1 {
		t.Fatalf("lease after taking it: %+v, want host-a's, 4 transitions, acquired %v, 1 s", got, taken)
	}
	r.clock.step(500 * time.Millisecond)
	if !r.try(t) {
		t.Fatal("did not renew")
	}
	got = r.get(t)
	if !got.acquired.Equal(taken) || !got.renewed.Equal(r.clock.now()) || got.transitions != 4 {
		t.Errorf("lease after renewing: %+v, want acquired %v kept, renewed now, 4 transitions", got, taken)
	}
}

// A Lease given up (holder empty) is taken at once; one this host held before (a restart) is
// renewed without a transition.
func TestLeaseReleasedOrOwnTakenAtOnce(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		holder      string
		transitions int32
	}{{"", 4}, {"host-a", 3}} {
		r := newLeaseRig(t)
		r.put(t, leaseRecord{holder: c.holder, seconds: 10, acquired: now, renewed: now, transitions: 3})
		if !r.try(t) {
			t.Fatalf("held by %q: not taken", c.holder)
		}
		if got := r.get(t); got.holder != "host-a" || got.transitions != c.transitions {
			t.Errorf("held by %q: lease %+v, want host-a's with %d transitions", c.holder, got, c.transitions)
		}
	}
}

// A leader whose renewals fail stops leading: its term's context ends, and run returns.
func TestLeaderStopsWhenRenewalFails(t *testing.T) {
	kube := fake.NewClientset()
	var fail atomic.Bool
	var updates atomic.Int32
	kube.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		updates.Add(1)
		if fail.Load() {
			return true, nil, errors.New("injected: api server unreachable")
		}
		return false, nil, nil
	})
	cfg := fastLease()
	// Renewals every 10 ms; a deadline of 800 ms so that a loaded machine's scheduling delay
	// never passes for a failed renewal while updates succeed.
	cfg.RetryPeriod, cfg.RenewDeadline = 10*time.Millisecond, 800*time.Millisecond
	el, err := newLeaseElector(cfg, kube.CoordinationV1().Leases(cfg.LeaseNamespace), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	leading, stopped, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(returned)
		el.run(t.Context(), func(ctx context.Context) {
			close(leading)
			<-ctx.Done()
			close(stopped)
		})
	}()
	<-leading
	for updates.Load() < 3 { // renewing while updates succeed
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-stopped:
		t.Fatal("stopped leading while renewals succeeded")
	default:
	}
	fail.Store(true)
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("still leading 10 s after renewals began to fail")
	}
	select {
	case <-stopped:
	default:
		t.Fatal("run returned before the term did")
	}
}

// A conflict on update (another host wrote first) is a failed attempt: the Lease stays
// another host's, the write carried the resourceVersion read, and a later attempt succeeds.
func TestLeaseConflictIsAFailedAttempt(t *testing.T) {
	r := newLeaseRig(t)
	var conflict atomic.Bool
	var sentRV atomic.Value
	r.kube.PrependReactor("update", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sentRV.Store(a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).ResourceVersion)
		if conflict.Load() {
			return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), "edgeovn-controller", errors.New("injected"))
		}
		return false, nil, nil
	})
	r.put(t, leaseRecord{holder: "host-b", seconds: 10, transitions: 3})
	r.try(t)
	r.clock.step(11 * time.Second)
	conflict.Store(true)
	ok, err := r.el.tryAcquireOrRenew(t.Context())
	if ok || !apierrors.IsConflict(err) {
		t.Fatalf("attempt on a conflict: %v, %v; want false and the conflict", ok, err)
	}
	l, err := r.leases.Get(t.Context(), r.el.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := recordOf(l.Spec).holder; h != "host-b" {
		t.Errorf("holder after a conflict: %q, want host-b", h)
	}
	if rv := sentRV.Load(); rv != l.ResourceVersion {
		t.Errorf("update sent resourceVersion %q, the Lease read has %q", rv, l.ResourceVersion)
	}
	conflict.Store(false)
	if !r.try(t) {
		t.Fatal("not taken once updates succeed")
	}
	conflict.Store(true) // a leader's renewal conflicting: fast path and reread both fail
	if ok, err := r.el.tryAcquireOrRenew(t.Context()); ok || !apierrors.IsConflict(err) {
		t.Fatalf("renewal on a conflict: %v, %v; want false and the conflict", ok, err)
	}
	conflict.Store(false)
	if !r.try(t) {
		t.Fatal("not renewed once updates succeed")
	}
}
