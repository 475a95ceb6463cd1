package health

import (
	"context"
	"time"
)

// Evaluate is one evaluation of checks without a Monitor, for the tests.
func Evaluate(ctx context.Context, checks []Check, timeout time.Duration) error {
	_, err := evaluateTimed(ctx, checks, timeout)
	return err
}

// Run is Attach, an evaluation at once, then Tick until ctx ends, for the tests.
func (m *Monitor) Run(ctx context.Context, checks []Check) error {
	if err := m.Attach(checks); err != nil {
		return err
	}
	_ = m.Check(ctx)
	return m.Tick(ctx)
}
