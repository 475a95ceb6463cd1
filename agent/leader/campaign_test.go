package leader

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/edgeovn/edgeovn/agent/metrics"
)

// fastLease makes a term change within a second.
func fastLease() Config {
	return Config{NodeName: "host-a", LeaseNamespace: "kube-system", LeaseName: "edgeovn-controller",
		LeaseDuration: time.Second, RenewDeadline: 500 * time.Millisecond, RetryPeriod: 100 * time.Millisecond}
}

// terms records the terms lead ran: how many ran at once, at most, and when each began and
// returned.
type terms struct {
	mu       sync.Mutex
	active   int
	maxAtMax int
	started  []time.Time
	returned []time.Time
}

func (ts *terms) begin() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.active++
	ts.maxAtMax = max(ts.maxAtMax, ts.active)
	ts.started = append(ts.started, time.Now())
	return len(ts.started)
}

func (ts *terms) end() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.active--
	ts.returned = append(ts.returned, time.Now())
}

// TestTermsNeverOverlap loses the Lease during a term whose controller takes 1.5 s to stop
// after its context ends: the next term must start only after that one returned, though the
// Lease is free for the taking long before (the elector's run waits for its term, and the
// campaign loop passes each term through the gate).
func TestTermsNeverOverlap(t *testing.T) {
	kube := fake.NewClientset()
	var failRenew atomic.Bool
	kube.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failRenew.Load() {
			return true, nil, errors.New("injected: api server unreachable")
		}
		return false, nil, nil
	})
	var ts terms
	secondStarted := make(chan struct{})
	lead := func(ctx context.Context) error {
		n := ts.begin()
		defer ts.end()
		if n == 1 {
			failRenew.Store(true) // the Lease is lost while this term runs
			<-ctx.Done()
			failRenew.Store(false)
			time.Sleep(1500 * time.Millisecond) // a controller slow to stop
			return nil
		}
		if n == 2 {
			close(secondStarted)
		}
		<-ctx.Done()
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- elect(ctx, election{cfg: fastLease(), leases: kube.CoordinationV1().Leases(fastLease().LeaseNamespace), log: slog.New(slog.DiscardHandler), lead: lead})
	}()
	select {
	case <-secondStarted:
	case <-time.After(20 * time.Second):
		t.Fatal("no second term within 20 s of losing the Lease")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("elect: %v", err)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.maxAtMax != 1 {
		t.Errorf("%d terms ran at once in one process, want 1", ts.maxAtMax)
	}
	if len(ts.returned) < 2 || ts.started[1].Before(ts.returned[0]) {
		t.Errorf("second term started %v, first returned %v: terms overlap", ts.started, ts.returned)
	}
	if ts.active != 0 {
		t.Errorf("elect returned with %d terms still running", ts.active)
	}
}

// TestShutdownReleasesAfterTerm: elect returns only once the term's lead has returned, and the
// Lease is then released (holder empty), not while the term still writes.
func TestShutdownReleasesAfterTerm(t *testing.T) {
	kube := fake.NewClientset()
	cfg := fastLease()
	leading := make(chan struct{})
	var holderAtReturn string
	lead := func(ctx context.Context) error {
		close(leading)
		<-ctx.Done()
		time.Sleep(300 * time.Millisecond)
		l, err := kube.CoordinationV1().Leases(cfg.LeaseNamespace).Get(context.Background(), cfg.LeaseName, metav1.GetOptions{})
		if err == nil && l.Spec.HolderIdentity != nil {
			holderAtReturn = *l.Spec.HolderIdentity
		}
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- elect(ctx, election{cfg: cfg, leases: kube.CoordinationV1().Leases(cfg.LeaseNamespace), log: slog.New(slog.DiscardHandler), lead: lead})
	}()
	select {
	case <-leading:
	case <-time.After(10 * time.Second):
		t.Fatal("not leading within 10 s")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("elect: %v", err)
	}
	if holderAtReturn != cfg.NodeName {
		t.Errorf("lease holder while the term was stopping: %q, want %q (released too early)", holderAtReturn, cfg.NodeName)
	}
	l, err := kube.CoordinationV1().Leases(cfg.LeaseNamespace).Get(context.Background(), cfg.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get lease: %v", err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("lease holder after shutdown: %q, want released", *h)
	}
}

// TestIneligibleNeverCampaigns: while the eligibility check fails, no Lease is even created
// and the state says why; once it passes, the host leads; when it fails again during the
// term, the term ends and the Lease is released.
func TestIneligibleNeverCampaigns(t *testing.T) {
	kube := fake.NewClientset()
	cfg := fastLease()
	m := metrics.New(slog.New(slog.DiscardHandler))
	var reason atomic.Value
	reason.Store("ovn northbound unreachable: injected")
	eligible := func(context.Context) error {
		if r := reason.Load().(string); r != "" {
			return errors.New(r)
		}
		return nil
	}
	leading, stopped := make(chan struct{}), make(chan struct{})
	lead := func(ctx context.Context) error {
		close(leading)
		<-ctx.Done()
		close(stopped)
		return nil
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		_ = elect(ctx, election{cfg: cfg, leases: kube.CoordinationV1().Leases(cfg.LeaseNamespace), log: slog.New(slog.DiscardHandler), metrics: m, lead: lead, eligible: eligible})
	}()
	time.Sleep(time.Second)
	if _, err := kube.CoordinationV1().Leases(cfg.LeaseNamespace).Get(ctx, cfg.LeaseName, metav1.GetOptions{}); err == nil {
		t.Fatal("an ineligible host created the Lease")
	}
	if st, why := m.ControllerState(); st != metrics.StateIneligible || why != "ovn northbound unreachable: injected" {
		t.Errorf("state %q (%q), want ineligible with the reason", st, why)
	}
	reason.Store("")
	select {
	case <-leading:
	case <-time.After(10 * time.Second):
		t.Fatal("not leading within 10 s of becoming eligible")
	}
	if st, _ := m.ControllerState(); st != metrics.StateLeader {
		t.Errorf("state %q while leading", st)
	}
	reason.Store("missing rights: patch pods")
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("term still running 10 s after the host became ineligible")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := kube.CoordinationV1().Leases(cfg.LeaseNamespace).Get(ctx, cfg.LeaseName, metav1.GetOptions{})
		if err == nil && (l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lease still held 5 s after giving up: %v %v", l.Spec.HolderIdentity, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st, why := m.ControllerState(); st != metrics.StateIneligible || why != "missing rights: patch pods" {
		t.Errorf("state %q (%q) after giving up", st, why)
	}
}
