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

// TestEvaluateRunsChecksAtOnce: the verdict waits for the slowest check, not for the sum;
// every check runs and the failures keep the checks' order.
func TestEvaluateRunsChecksAtOnce(t *testing.T) {
	const n = 5
	var arrived sync.WaitGroup
	arrived.Add(n)
	barrier := func(err error) func(context.Context) error {
		return func(ctx context.Context) error {
			arrived.Done()
			arrived.Wait() // passes only when all n checks run at the same time
			return err
		}
	}
	checks := make([]Check, n)
	for i := range checks {
		checks[i] = Check{Name: fmt.Sprintf("c%d", i), Run: barrier(nil)}
	}
	checks[3].Run, checks[1].Run = barrier(errStuck), barrier(errGone)
	done := make(chan error, 1)
	go func() { done <- Evaluate(context.Background(), checks, time.Minute) }()
	select {
	case err := <-done:
		var nr *NotReadyError
		if !errors.As(err, &nr) || len(nr.Failures) != 2 || nr.Failures[0].Check != "c1" || nr.Failures[1].Check != "c3" {
			t.Fatalf("Evaluate = %v, want c1 and c3 failed, in that order", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("checks ran one after another: the barrier never opened")
	}
}
