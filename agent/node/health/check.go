package health

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Check is one thing the datapath needs.
type Check struct {
	// Name says what is checked ("ovs-vswitchd", "br-int"); it starts the failure's reason.
	Name string
	// Run returns nil when the thing is there; it must return by ctx's deadline. It runs
	// concurrently with the other checks of an evaluation.
	Run func(ctx context.Context) error
	// Liveness: while this check fails the systemd watchdog is not fed either.
	Liveness bool
}

// DefaultCheckTimeout bounds one check: everything checked is local and answers in
// microseconds when it is alive.
const DefaultCheckTimeout = time.Second

// Failure is one failed check.
type Failure struct {
	Check    string
	Err      error
	Liveness bool
	// TimedOut: the check ran until its timeout (busy, not refused or missing).
	TimedOut bool
}

// NotReadyError lists every check that failed in one evaluation.
type NotReadyError struct{ Failures []Failure }

func (e *NotReadyError) Error() string {
	parts := make([]string, 0, len(e.Failures))
	for _, f := range e.Failures {
		parts = append(parts, fmt.Sprintf("%s: %v", f.Check, f.Err))
	}
	return "datapath not ready: " + strings.Join(parts, "; ")
}

// Unwrap lets errors.Is find a check's own error.
func (e *NotReadyError) Unwrap() []error {
	errs := make([]error, 0, len(e.Failures))
	for _, f := range e.Failures {
		errs = append(errs, f.Err)
	}
	return errs
}

// livenessFailed reports whether a failure also withholds the watchdog.
func (e *NotReadyError) livenessFailed() bool {
	for _, f := range e.Failures {
		if f.Liveness {
			return true
		}
	}
	return false
}

// Slowest is the check that took longest in one evaluation.
type Slowest struct {
	Check string
	Took  time.Duration
}

// evaluateTimed runs every check at once, each within timeout, and returns nil or a
// *NotReadyError listing the failures in the checks' order, and which check took longest.
// The checks are independent (a database echo, two control sockets, cache and netlink reads),
// so the verdict takes as long as the slowest one, not their sum.
func evaluateTimed(ctx context.Context, checks []Check, timeout time.Duration) (Slowest, error) {
	errs := make([]error, len(checks))
	took := make([]time.Duration, len(checks))
	timedOut := make([]bool, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			t0 := time.Now()
			errs[i] = c.Run(cctx)
			took[i] = time.Since(t0)
			timedOut[i] = errors.Is(cctx.Err(), context.DeadlineExceeded)
		})
	}
	wg.Wait()
	var slowest Slowest
	var failed []Failure
	for i, c := range checks {
		if took[i] > slowest.Took {
			slowest = Slowest{Check: c.Name, Took: took[i]}
		}
		if errs[i] != nil {
			failed = append(failed, Failure{Check: c.Name, Err: errs[i], Liveness: c.Liveness, TimedOut: timedOut[i]})
		}
	}
	if len(failed) == 0 {
		return slowest, nil
	}
	return slowest, &NotReadyError{Failures: failed}
}
