//go:build !edgeovn_testhooks

package controller

import "context"

// HoldAfterPortEnv is testhook.go's; the shipped binary, built without edgeovn_testhooks,
// reads no such variable.
const HoldAfterPortEnv = "EDGEOVN_TEST_HOLD_AFTER_PORT"

func (c *Controller) holdAfterPort(context.Context, string) error { return nil }

func holdPodFromEnv() string { return "" }
