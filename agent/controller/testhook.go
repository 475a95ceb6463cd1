//go:build edgeovn_testhooks

package controller

import (
	"context"
	"fmt"
	"os"
)

// HoldAfterPortEnv names a pod ("namespace/name") whose first allocation in a term stops
// after its port is created and before its annotations are written, until the term ends.
// The e2e suite SIGKILLs the process there, to check that the crash window between the two
// leaves no address a later pod could be given. Compiled only with the build tag
// edgeovn_testhooks (the e2e suite's binaries): the shipped binary has no such hook.
const HoldAfterPortEnv = "EDGEOVN_TEST_HOLD_AFTER_PORT"

// holdAfterPort blocks when pod is the one HoldAfterPortEnv names.
func (c *Controller) holdAfterPort(ctx context.Context, pod string) error {
	if c.holdPod == "" || c.holdPod != pod {
		return nil
	}
	c.log.Warn("test hook: holding after port creation, before annotation", "pod", pod, "env", HoldAfterPortEnv)
	<-ctx.Done()
	return fmt.Errorf("held after port creation of %s (%s): %w", pod, HoldAfterPortEnv, ctx.Err())
}

func holdPodFromEnv() string { return os.Getenv(HoldAfterPortEnv) }
