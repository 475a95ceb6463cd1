package leader

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgeovn/edgeovn/agent/metrics"
)

// errIneligible is the cause of a campaign ended because this host stopped being eligible.
var errIneligible = errors.New("no longer eligible for the controller role")

// checkFailuresToGiveUp is how many eligibility checks in a row must fail while campaigning
// or leading before this host gives the Lease up: one lost probe is not a reason to move the
// controller role.
const checkFailuresToGiveUp = 2

// checkEligible runs the eligibility check, allowed as long as a renewal of the Lease is (a
// loaded machine is slow to answer, not ineligible).
func (e election) checkEligible(ctx context.Context) error {
	if e.eligible == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	return e.eligible(cctx)
}

// waitEligible returns true once this host may campaign, logging and reporting each new
// reason it may not meanwhile; false when ctx ended.
func (e election) waitEligible(ctx context.Context) bool {
	var last string
	for {
		err := e.checkEligible(ctx)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			if last != "" {
				e.log.Info("eligible for the controller role again; campaigning")
			}
			return true
		}
		if msg := err.Error(); msg != last {
			e.log.Warn("not campaigning for the controller Lease", "reason", msg)
			last = msg
		}
		e.metrics.SetControllerState(metrics.StateIneligible, err.Error())
		if !sleep(ctx, e.recheck) {
			return false
		}
	}
}

// watchEligible rechecks eligibility until ctx ends and ends the campaign (and with it a
// term) through stop when checks fail checkFailuresToGiveUp times in a row.
func (e election) watchEligible(ctx context.Context, stop context.CancelCauseFunc) {
	failures := 0
	for sleep(ctx, e.recheck) {
		err := e.checkEligible(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			failures = 0
			continue
		}
		failures++
		e.log.Warn("controller eligibility check failed", "reason", err.Error(), "failures", failures)
		if failures >= checkFailuresToGiveUp {
			e.metrics.SetControllerState(metrics.StateIneligible, err.Error())
			stop(fmt.Errorf("%w: %w", errIneligible, err))
			return
		}
	}
}
