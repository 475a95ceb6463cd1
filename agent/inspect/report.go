package inspect

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Status of one check.
type Status string

const (
	OK   Status = "ok"
	Fail Status = "FAIL"
	Skip Status = "skip"
)

// Result is a check's verdict: what was found, and for a failure how to fix it.
type Result struct {
	Status Status
	Detail string
	Fix    string
}

func pass(format string, args ...any) Result {
	return Result{Status: OK, Detail: fmt.Sprintf(format, args...)}
}

func skip(format string, args ...any) Result {
	return Result{Status: Skip, Detail: fmt.Sprintf(format, args...)}
}

func fail(fix, format string, args ...any) Result {
	return Result{Status: Fail, Detail: fmt.Sprintf(format, args...), Fix: fix}
}

// Check is one named check.
type Check struct {
	Name string
	Run  func(ctx context.Context) Result
}

// CheckTimeout bounds one check, connecting to a database included.
const CheckTimeout = 10 * time.Second

// Report runs the checks in order, each within timeout, writes a line for each (and its fix)
// to w, and returns how many failed.
func Report(ctx context.Context, w io.Writer, checks []Check, timeout time.Duration) int {
	failed := 0
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		r := c.Run(cctx)
		cancel()
		fmt.Fprintf(w, "[%4s] %-22s %s\n", r.Status, c.Name, r.Detail)
		if r.Status == Fail {
			failed++
			fmt.Fprintf(w, "       %-22s fix: %s\n", "", r.Fix)
		}
	}
	return failed
}
