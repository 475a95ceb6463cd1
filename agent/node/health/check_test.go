package health

import (
	"context"
	"errors"
	"strings"
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
