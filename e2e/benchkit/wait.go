package benchkit

import (
	"context"
	"fmt"
	"time"
)

// Wait calls ok every `every` until it holds, returns its error, or ctx ends; what names the
// condition in the error.
func Wait(ctx context.Context, what string, every time.Duration, ok func() (bool, error)) error {
	for {
		done, err := ok()
		if err != nil {
			return fmt.Errorf("wait for %s: %w", what, err)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(every):
		}
	}
}
