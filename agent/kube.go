package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// kubeconfigPoll is how often a missing or broken kubeconfig is tried again: it only runs
// until the file first loads, at boot.
const kubeconfigPoll = time.Second

// kubeSource hands out the API client once its kubeconfig exists and loads. On a k3s
// server's first boot edgeovn starts before k3s has written /etc/rancher/k3s/k3s.yaml, and the
// node role must come up (and tell systemd) without it; what needs the API waits here. A file
// that exists but does not load (half written, a typo) is waited out too, with an error in the
// log naming it: a bad kubeconfig never stops the node role, whose pods keep their network.
type kubeSource struct {
	path string // "" means in-cluster
	log  *slog.Logger

	mu     sync.Mutex
	client *kubeapi.Client
}

// Get returns the client, waiting (until ctx ends) for the kubeconfig to exist and load. Its
// only error is ctx's end, which carries the last reason the file did not load.
func (s *kubeSource) Get(ctx context.Context) (*kubeapi.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		return s.client, nil
	}
	c, err := s.wait(ctx)
	if err != nil {
		return nil, err
	}
	s.client = c
	return c, nil
}

func (s *kubeSource) wait(ctx context.Context) (*kubeapi.Client, error) {
	var logged string
	for {
		c, err := s.load()
		if err == nil {
			if logged != "" {
				s.log.Info("kubeconfig loaded", "path", s.path)
			}
			return c, nil
		}
		if msg := err.Error(); msg != logged {
			if errors.Is(err, fs.ErrNotExist) {
				s.log.Info("waiting for the kubeconfig; the node role runs meanwhile", "path", s.path)
			} else {
				s.log.Error("kubeconfig does not load; the node role runs meanwhile, retrying", "path", s.path, "err", err)
			}
			logged = msg
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for kubeconfig %q: %w (last: %v)", s.path, ctx.Err(), err)
		case <-time.After(kubeconfigPoll):
		}
	}
}

func (s *kubeSource) load() (*kubeapi.Client, error) {
	if s.path != "" {
		if _, err := os.Stat(s.path); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", s.path, err)
		}
	}
	return kubeClient(s.path)
}

// apiRate is a client's own limit on its API requests (client-go's token bucket).
type apiRate struct {
	qps   float32
	burst int
}

// The node role, the election and the diagnostics make a few requests a minute and share
// one client at client-go's usual rate. The controller role patches every new pod and has a
// client of its own: at 50 a second, the shared client's rate was the ceiling of pods
// allocated per second. Its limit sits above the goal of 200 pods a second, with room for
// each pod's node update; the API server's own priority and fairness still protects it.
var (
	sharedRate     = apiRate{qps: 50, burst: 100}
	controllerRate = apiRate{qps: 500, burst: 1000}
)

// Controller returns a client of its own for the controller role (at controllerRate), once
// the kubeconfig loads; its only error is ctx's end.
func (s *kubeSource) Controller(ctx context.Context) (*kubeapi.Client, error) {
	if _, err := s.Get(ctx); err != nil {
		return nil, err
	}
	return kubeClientAt(s.path, controllerRate)
}

func kubeClient(kubeconfig string) (*kubeapi.Client, error) {
	return kubeClientAt(kubeconfig, sharedRate)
}

func kubeClientAt(kubeconfig string, rate apiRate) (*kubeapi.Client, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = rate.qps, rate.burst
	rc.UserAgent = "edgeovn"
	kube, err := kubeapi.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create kubernetes client: %w", err)
	}
	return kube, nil
}
