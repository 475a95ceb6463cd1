package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// servingPoll is how often WaitServing asks the API server whether it is serving.
const servingPoll = 100 * time.Millisecond

// WaitServing returns once the API server serves what edgeovn's informers list first, asking
// every 100 ms (each try bounded by a second); its only error is ctx's end, carrying the last
// answer. Informers started before the API server is up (at a host's boot edgeovn starts
// before k3s, as its unit orders it) fail their lists and back off, up to seconds after the
// server is up: a host's first pods after a reboot waited for that backoff. Starting them once
// it serves costs nothing, since nothing they serve can happen before it does.
//
// Serving is a list of pods and one of kubeovn.io Subnets answered with 200 under this
// client's credentials (storage up, the authorizer's caches synced, the custom resources'
// handlers installed), or /readyz answering 200 (a new cluster has no Subnets yet; credentials
// that may not list pods hear it from their informers). Not /readyz alone: it also waits for
// kube-apiserver's post-start hooks, of which the system priority classes' polls once a
// second before its first try; after a reboot that held every pod's ADD a second past the
// moment kubelet, whose informer needs no more than the list, re-created the sandboxes.
func WaitServing(ctx context.Context, c *Client, log *slog.Logger) error {
	rc := c.groups[corev1.SchemeGroupVersion]
	last := "no answer yet"
	for {
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		ok, answer := serving(tctx, rc)
		cancel()
		if ok {
			if last != "no answer yet" {
				log.Info("API server serving")
			}
			return nil
		}
		if ctx.Err() == nil { // a try cut short by ctx's end is no answer
			if last == "no answer yet" {
				log.Info("waiting for the API server to serve; the node role runs meanwhile", "last", answer)
			} else if answer != last {
				log.Debug("API server not serving yet", "last", answer)
			}
			last = answer
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the API server: %w (last: %s)", ctx.Err(), last)
		case <-time.After(servingPoll):
		}
	}
}

// serving is one try of WaitServing's question, with the answer to report when no. While
// nothing answers (the server not up yet: most of a boot's wait) a try is one request.
func serving(ctx context.Context, rc rest.Interface) (bool, string) {
	err := get(ctx, rc, "/api/v1/pods", "1")
	if err == nil {
		if err = get(ctx, rc, "/apis/kubeovn.io/v1/subnets", "1"); err == nil {
			return true, ""
		}
	}
	var answered apierrors.APIStatus
	if !errors.As(err, &answered) {
		return false, err.Error()
	}
	if err := get(ctx, rc, "/readyz", ""); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// get asks for path (a list of at most limit items when limit is set): nil on 200; an error
// with an apierrors.APIStatus when the server answered otherwise.
func get(ctx context.Context, rc rest.Interface, path, limit string) error {
	// No retries: a 429 or 503 with Retry-After (an API server still starting) would have the
	// client sleep through the try's second and hold WaitServing past the moment it serves.
	req := rc.Get().AbsPath(path).MaxRetries(0)
	if limit != "" {
		req = req.Param("limit", limit)
	}
	var code int
	err := req.Do(ctx).StatusCode(&code).Error()
	if err == nil && code != http.StatusOK {
		err = apierrors.NewGenericServerResponse(code, "GET", schema.GroupResource{}, path, "not 200", 0, false)
	}
	return err
}
