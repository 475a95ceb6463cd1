package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/edgeovn/edgeovn/agent/metrics"
)

// Bounds of the pause after a term that failed on its own (lead returned an error), before
// this host campaigns again: meanwhile another host may take the Lease.
const (
	termRetryFirst = time.Second
	termRetryMax   = 30 * time.Second
)

// errTermEnded is the campaign's cause of end when lead returned by itself.
var errTermEnded = errors.New("controller role stopped")

type election struct {
	cfg     Config
	leases  LeaseClient // the Lease namespace's
	log     *slog.Logger
	metrics *metrics.Metrics
	lead    func(ctx context.Context) error
	// eligible says why this host may not hold the Lease now (nil: it may); nil func: always
	// eligible. It is asked before every campaign and every recheck while campaigning or
	// leading.
	eligible func(ctx context.Context) error
	recheck  time.Duration // zero: RetryPeriod
}

// Run campaigns for the controller Lease until ctx ends, running r.Lead while holding it, as
// long as this host is eligible (eligibility.go): OVN northbound answers and the API grants
// every right the controller role uses.
func Run(ctx context.Context, r Request) error {
	return elect(ctx, election{cfg: r.Config, leases: r.Leases, log: r.Log, metrics: r.Metrics, lead: r.Lead,
		eligible: newEligibility(r.Config, r.Reviews, r.TLS).check})
}

// elect campaigns for the controller Lease until ctx ends, running lead while holding it. A
// host that is not eligible does not campaign; one that stops being eligible gives the Lease
// up. Terms never overlap: a campaign starts only once the previous term's lead returned.
func elect(ctx context.Context, e election) error {
	if e.recheck <= 0 {
		e.recheck = e.cfg.RetryPeriod
	}
	var gate termGate
	pause := termRetryFirst
	for ctx.Err() == nil {
		if !e.waitEligible(ctx) {
			return nil
		}
		res, err := e.campaign(ctx, &gate)
		if err != nil {
			return err
		}
		if res.termErr == nil {
			pause = termRetryFirst
			continue
		}
		e.log.Error("controller role failed; campaigning again after a pause", "err", res.termErr, "after", pause)
		if !sleep(ctx, pause) {
			return nil
		}
		pause = min(2*pause, termRetryMax)
	}
	return nil
}

// termResult is how one campaign ended.
type termResult struct {
	led     bool
	termErr error // lead's error, if it returned one
}

// campaign runs one leader elector until the Lease is lost, the term ends, this host stops
// being eligible or ctx ends, and returns only once the term (if any) has fully stopped and
// the Lease has been given back.
func (e election) campaign(ctx context.Context, gate *termGate) (termResult, error) {
	var res termResult
	le, err := newLeaseElector(e.cfg, e.leases, e.log)
	if err != nil {
		return res, fmt.Errorf("configure leader election: %w", err)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go e.watchEligible(cctx, cancel)
	e.metrics.SetControllerState(metrics.StateCandidate, "")
	// The elector never releases the Lease itself: giveUp does, once the term has stopped.
	le.run(cctx, func(tctx context.Context) {
		if !gate.begin(tctx) {
			return
		}
		defer gate.end()
		res.led = true
		res.termErr = e.term(tctx)
		cancel(errTermEnded)
	})
	gate.wait()
	if res.led {
		e.giveUp(ctx, context.Cause(cctx))
		if !errors.Is(context.Cause(cctx), errIneligible) {
			e.metrics.SetControllerState(metrics.StateCandidate, "")
		}
	}
	return res, nil
}

// term runs lead for one term of leadership.
func (e election) term(ctx context.Context) error {
	e.log.Info("acquired controller lease", "lease", e.cfg.LeaseNamespace+"/"+e.cfg.LeaseName)
	e.metrics.SetControllerState(metrics.StateLeader, "")
	e.metrics.SetLeader(true)
	defer e.metrics.SetLeader(false)
	return e.lead(ctx)
}

// giveUp releases the Lease after a term, if this host still holds it, so another host takes
// over at once instead of after the Lease expires; why says why the term ended.
func (e election) giveUp(ctx context.Context, why error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.RenewDeadline)
	defer cancel()
	if err := releaseLease(rctx, e.leases, e.cfg.LeaseName, e.cfg.NodeName, time.Now()); err != nil {
		e.log.Warn("controller term ended; the lease could not be released, it expires on its own", "why", why, "err", err)
		return
	}
	e.log.Info("controller term ended, lease released or lost", "why", why)
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
