package kubeapi

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// servingPoll is how often WaitServing asks the API server whether it is ready.
const servingPoll = 100 * time.Millisecond

// WaitServing returns once the API server answers /readyz with 200, asking every 100 ms (each
// try bounded by a second); its only error is ctx's end, carrying the last answer. Informers
// started before the API server is up (at a host's boot edgeovn starts before k3s, as its
// unit orders it) fail their lists and back off, up to seconds after the server is up: a
// host's first pods after a reboot waited for that backoff. Starting them once it answers
// costs nothing, since nothing they serve can happen before it does.
func WaitServing(ctx context.Context, c *Client, log *slog.Logger) error {
	rc := c.groups[corev1.SchemeGroupVersion]
	last := "no answer yet"
	for {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		var code int
		err := rc.Get().AbsPath("/readyz").Do(tctx).StatusCode(&code).Error()
		cancel()
		if err == nil && code == 200 {
			if last != "no answer yet" {
				log.Info("API server ready")
			}
			return nil
		}
		if ctx.Err() == nil { // a try cut short by ctx's end is no answer
			if last == "no answer yet" {
				log.Info("waiting for the API server to be ready; the node role runs meanwhile", "last", lastAnswer(code, err))
			}
			last = lastAnswer(code, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the API server: %w (last: %s)", ctx.Err(), last)
		case <-time.After(servingPoll):
		}
	}
}

// lastAnswer describes a /readyz try for a log or an error.
func lastAnswer(code int, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("status %d", code)
}
