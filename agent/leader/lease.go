package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// leaseJitter spreads the campaign's attempts as client-go's elector does (its JitterFactor):
// each pause is RetryPeriod plus up to 1.2 times more.
const leaseJitter = 1.2

// leaseRecord is what a Lease says of its holder (client-go's LeaderElectionRecord). An empty
// holder means the Lease was given up: anyone may take it.
type leaseRecord struct {
	holder      string
	seconds     int32 // LeaseDurationSeconds
	acquired    time.Time
	renewed     time.Time
	transitions int32
}

func recordOf(spec coordinationv1.LeaseSpec) leaseRecord {
	var r leaseRecord
	if spec.HolderIdentity != nil {
		r.holder = *spec.HolderIdentity
	}
	if spec.LeaseDurationSeconds != nil {
		r.seconds = *spec.LeaseDurationSeconds
	}
	if spec.AcquireTime != nil {
		r.acquired = spec.AcquireTime.Time
	}
	if spec.RenewTime != nil {
		r.renewed = spec.RenewTime.Time
	}
	if spec.LeaseTransitions != nil {
		r.transitions = *spec.LeaseTransitions
	}
	return r
}

func (r leaseRecord) spec() coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{HolderIdentity: &r.holder, LeaseDurationSeconds: &r.seconds,
		AcquireTime: &metav1.MicroTime{Time: r.acquired}, RenewTime: &metav1.MicroTime{Time: r.renewed},
		LeaseTransitions: &r.transitions}
}

func (r leaseRecord) equal(o leaseRecord) bool {
	return r.holder == o.holder && r.seconds == o.seconds && r.transitions == o.transitions &&
		r.acquired.Equal(o.acquired) && r.renewed.Equal(o.renewed)
}

// leaseElector campaigns for one Lease under one identity, with the rules of client-go's
// leader elector on a LeaseLock (ReleaseOnCancel false). Whether another host's Lease expired
// is judged by this host's clock only: the Lease is expired once its record has not changed
// for its LeaseDurationSeconds since this host saw it change, whatever times it holds. One
// elector serves one campaign, from one goroutine.
type leaseElector struct {
	leases        LeaseClient
	namespace     string
	name, id      string
	duration      time.Duration
	renewDeadline time.Duration
	retry         time.Duration
	log           *slog.Logger
	now           func() time.Time

	lease      *coordinationv1.Lease // as last read or written, set whenever observed.holder is: Update sends its resourceVersion
	observed   leaseRecord           // the record as last read or written
	observedAt time.Time             // when observed last changed, by now
	reported   string                // the holder last reported
}

// newLeaseElector checks cfg's timings as client-go's NewLeaderElector does.
func newLeaseElector(cfg Config, leases LeaseClient, log *slog.Logger) (*leaseElector, error) {
	switch {
	case cfg.RetryPeriod <= 0 || cfg.RenewDeadline <= 0 || cfg.LeaseDuration <= 0:
		return nil, errors.New("lease timings must be greater than zero")
	case cfg.LeaseDuration <= cfg.RenewDeadline:
		return nil, errors.New("lease duration must be greater than the renew deadline")
	case cfg.RenewDeadline <= time.Duration(leaseJitter*float64(cfg.RetryPeriod)):
		return nil, fmt.Errorf("renew deadline must be greater than the retry period times %v", leaseJitter)
	case cfg.NodeName == "":
		return nil, errors.New("lease identity (node name) is empty")
	}
	return &leaseElector{leases: leases, namespace: cfg.LeaseNamespace, name: cfg.LeaseName, id: cfg.NodeName,
		duration: cfg.LeaseDuration, renewDeadline: cfg.RenewDeadline, retry: cfg.RetryPeriod, log: log, now: time.Now}, nil
}

// run campaigns until this host takes the Lease or ctx ends. Holding it, run renews it and
// runs lead, whose context ends when a renewal fails or ctx ends; run returns once lead has.
func (l *leaseElector) run(ctx context.Context, lead func(context.Context)) {
	if !l.acquire(ctx) {
		return
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(tctx)
	}()
	if err := l.keep(ctx); ctx.Err() == nil {
		l.log.Warn("controller lease lost", "lease", l.namespace+"/"+l.name, "err", err)
	}
	cancel()
	<-done
}

// acquire tries to take the Lease every RetryPeriod, jittered, until it holds it (true) or
// ctx ends (false).
func (l *leaseElector) acquire(ctx context.Context) bool {
	for ctx.Err() == nil {
		ok, err := l.tryAcquireOrRenew(ctx)
		l.report()
		switch {
		case ok:
			return true
		case ctx.Err() != nil: // the campaign ended during the attempt
		case apierrors.IsConflict(err): // another candidate wrote first
			l.log.Debug("controller lease not acquired", "err", err)
		case err != nil:
			l.log.Warn("controller lease not acquired", "err", err)
		}
		sleep(ctx, l.retry+time.Duration(rand.Float64()*leaseJitter*float64(l.retry)))
	}
	return false
}

// keep renews the held Lease every RetryPeriod until a renewal fails or ctx ends, and says
// which.
func (l *leaseElector) keep(ctx context.Context) error {
	for sleep(ctx, l.retry) {
		if err := l.renew(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// renew retries renewing the Lease every RetryPeriod until it succeeds or RenewDeadline
// passes.
func (l *leaseElector) renew(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, l.renewDeadline)
	defer cancel()
	for {
		ok, err := l.tryAcquireOrRenew(dctx)
		l.report()
		switch {
		case ok:
			return nil
		case ctx.Err() != nil: // the term ended during the attempt
			return ctx.Err()
		case err == nil:
			err = fmt.Errorf("held by %s", l.observed.holder)
		}
		l.log.Warn("controller lease not renewed", "err", err)
		if !sleep(dctx, l.retry) {
			return fmt.Errorf("not renewed within %v: %w", l.renewDeadline, err)
		}
	}
}

// tryAcquireOrRenew makes one attempt to take or renew the Lease, by client-go's rules: true
// when this host holds it now; false with a nil error when another host holds it and its
// record changed within its duration. The Lease is taken when absent, given up, expired or
// held by this host already; every write carries the resourceVersion last read, so a conflict
// is a failed attempt.
func (l *leaseElector) tryAcquireOrRenew(ctx context.Context) (bool, error) {
	now := l.now()
	want := leaseRecord{holder: l.id, seconds: int32(l.duration / time.Second), acquired: now, renewed: now}
	if l.observed.holder == l.id && l.valid(now) {
		// Renewing a Lease this host holds: write over the copy last seen, without reading.
		want.acquired, want.transitions = l.observed.acquired, l.observed.transitions
		err := l.update(ctx, want)
		if err == nil {
			return true, nil
		}
		l.log.Debug("controller lease not renewed in place; reading it", "err", err)
	}
	lease, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return l.create(ctx, want)
	}
	if err != nil {
		return false, fmt.Errorf("get lease: %w", err)
	}
	l.lease = lease
	cur := recordOf(lease.Spec)
	if !cur.equal(l.observed) {
		l.observe(cur)
	}
	switch {
	case cur.holder == l.id:
		want.acquired, want.transitions = cur.acquired, cur.transitions
	case cur.holder != "" && l.valid(now):
		return false, nil
	default:
		want.transitions = cur.transitions + 1
	}
	if err := l.update(ctx, want); err != nil {
		return false, err
	}
	return true, nil
}

// valid says whether the observed record is still in force at now: it changed less than its
// LeaseDurationSeconds ago, as this host saw it.
func (l *leaseElector) valid(now time.Time) bool {
	return l.observedAt.Add(time.Duration(l.observed.seconds) * time.Second).After(now)
}

func (l *leaseElector) observe(r leaseRecord) {
	l.observed, l.observedAt = r, l.now()
}

func (l *leaseElector) create(ctx context.Context, r leaseRecord) (bool, error) {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.namespace, Name: l.name}, Spec: r.spec()}
	got, err := l.leases.Create(ctx, lease, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("create lease: %w", err)
	}
	l.lease = got
	l.observe(r)
	return true, nil
}

// update writes r over the Lease as last read or written.
func (l *leaseElector) update(ctx context.Context, r leaseRecord) error {
	next := l.lease.DeepCopy()
	next.Spec = r.spec()
	got, err := l.leases.Update(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("update lease: %w", err)
	}
	l.lease = got
	l.observe(r)
	return nil
}

// report logs when the observed holder becomes another host (client-go's OnNewLeader).
func (l *leaseElector) report() {
	h := l.observed.holder
	if h == l.reported {
		return
	}
	l.reported = h
	if h != "" && h != l.id {
		l.log.Info("controller role held elsewhere", "leader", h)
	}
}

// releaseLease gives the Lease up if id holds it, as client-go's release does: the holder
// emptied, the duration one second, the transitions kept. Held by another host, it is left.
func releaseLease(ctx context.Context, leases LeaseClient, name, id string, now time.Time) error {
	lease, err := leases.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get lease: %w", err)
	}
	cur := recordOf(lease.Spec)
	if cur.holder != id {
		return nil
	}
	lease = lease.DeepCopy()
	lease.Spec = leaseRecord{seconds: 1, acquired: now, renewed: now, transitions: cur.transitions}.spec()
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update lease: %w", err)
	}
	return nil
}
