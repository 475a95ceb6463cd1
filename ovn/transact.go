package ovn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/ovsdb"
)

// Transact commits ops as one transaction and checks every operation's result, because
// libovsdb returns a nil error for transactions whose operations failed. A failed wait
// operation (the guards edgeovn puts in front of inserts and updates) is reported as
// ErrConflict. An empty ops is a no-op.
func Transact(ctx context.Context, c client.Client, ops []ovsdb.Operation) error {
	if len(ops) == 0 {
		return nil
	}
	results, err := c.Transact(ctx, ops...)
	if err != nil {
		return fmt.Errorf("transact: %w", err)
	}
	opErrs, err := ovsdb.CheckOperationResults(results, ops)
	if err == nil {
		return nil
	}
	if len(opErrs) == 0 {
		if isDuplicate(err) {
			return fmt.Errorf("transact: %w: %w", ErrConflict, err)
		}
		return fmt.Errorf("transact: %w", err)
	}
	errs := make(opErrors, 0, len(opErrs)+1)
	for _, e := range opErrs {
		var timedOut *ovsdb.TimedOut
		if errors.As(e, &timedOut) && !errors.Is(errs, ErrConflict) {
			errs = append(opErrors{ErrConflict}, errs...)
		}
		errs = append(errs, describeOpError(e))
	}
	return fmt.Errorf("transact: %w", errs)
}

// isDuplicate reports the commit failing on a schema index (two rows with one name in
// Logical_Switch_Port, say): another writer created the row after the cache was read. For
// tables with such an index that check is free, where a wait guard costs the server a scan.
func isDuplicate(err error) bool {
	var cv *ovsdb.ConstraintViolation
	return errors.As(err, &cv) && strings.Contains(cv.Error(), "identical values")
}

// opErrors keeps every failed operation visible in one line while errors.Is/As still reach
// each of them.
type opErrors []error

func (e opErrors) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (e opErrors) Unwrap() []error { return e }

func describeOpError(e ovsdb.OperationError) error {
	op := e.Operation()
	if op == nil {
		return e
	}
	return fmt.Errorf("%s on %s: %w", op.Op, op.Table, e)
}
