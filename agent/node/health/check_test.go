package health

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	errGone  = errors.New("gone")
	errStuck = errors.New("stuck")
)

func fixed(err error) func(context.Context) error { return func(context.Context) error { return err } }

func TestEvaluateListsEveryFailure(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	checks := []Check{
		{Name: "ovsdb", Run: fixed(nil), Liveness: true},
		{Name: "br-int", Run: fixed(errGone)},
		{Name: "ovs-vswitchd", Run: hang},
		{Name: "ovn0", Run: fixed(errStuck)},
	}
	start := time.Now()
	err := Evaluate(context.Background(), checks, 20*time.Millisecond)
	if time.Since(start) > 5*time.Second {
		t.Fatalf("a hanging check was not bounded by its timeout")
	}
	var nr *NotReadyError
	if !errors.As(err, &nr) || len(nr.Failures) != 3 {
		t.Fatalf("Evaluate = %v, want 3 failures", err)
	}
	if !errors.Is(err, errGone) || !errors.Is(err, errStuck) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the checks' own errors are not found in %v", err)
	}
	for _, want := range []string{"br-int: gone", "ovs-vswitchd: context deadline exceeded", "ovn0: stuck"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("reason %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "ovsdb") || nr.livenessFailed() {
		t.Errorf("a passing liveness check is reported: %v", err)
	}
	if err := Evaluate(context.Background(), checks[:1], time.Second); err != nil {
		t.Errorf("all checks pass: %v", err)
	}
}

// TestEvaluateRunsChecksAtOnce: each check waits until every check has started, so checks
// run one after the other would time out.
func TestEvaluateRunsChecksAtOnce(t *testing.T) {
	const n = 4
	var started sync.WaitGroup
	started.Add(n)
	allStarted := make(chan struct{})
	go func() { started.Wait(); close(allStarted) }()
	checks := make([]Check, n)
	for i := range checks {
		checks[i] = Check{Name: fmt.Sprintf("daemon-%d", i), Run: func(ctx context.Context) error {
			started.Done()
			select {
			case <-allStarted:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}}
	}
	if err := Evaluate(context.Background(), checks, 10*time.Second); err != nil {
		t.Fatalf("checks that need each other running at once: %v", err)
	}
}
