package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
)

// kubeconfigPoll is how often a missing or broken kubeconfig is tried again: it only runs
// until the file first loads, at boot.
const kubeconfigPoll = time.Second

// Source hands out the API client once its kubeconfig exists and loads. On a k3s
// server's first boot edgeovn starts before k3s has written /etc/rancher/k3s/k3s.yaml, and the
// node role must come up (and tell systemd) without it; what needs the API waits here. A file
// that exists but does not load (half written, a typo) is waited out too, with an error in the
// log naming it: a bad kubeconfig never stops the node role, whose pods keep their network.
type Source struct {
	path string // "" means in-cluster
	log  *slog.Logger

	mu     sync.Mutex
	client *Client
}

// NewSource returns the Source of the kubeconfig at path ("" for in-cluster).
func NewSource(path string, log *slog.Logger) *Source {
	return &Source{path: path, log: log}
}

// Get returns the client, waiting (until ctx ends) for the kubeconfig to exist and load. Its
// only error is ctx's end, which carries the last reason the file did not load.
func (s *Source) Get(ctx context.Context) (*Client, error) {
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

func (s *Source) wait(ctx context.Context) (*Client, error) {
	var logged string
	for {
		c, err := s.tryLoad()
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

// tryLoad makes the client if the kubeconfig exists and loads now.
func (s *Source) tryLoad() (*Client, error) {
	if s.path != "" {
		if _, err := os.Stat(s.path); err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", s.path, err)
		}
	}
	return Load(s.path)
}

// Controller returns a client of its own for the controller role (at controllerRate), once
// the kubeconfig loads; its only error is ctx's end.
func (s *Source) Controller(ctx context.Context) (*Client, error) {
	if _, err := s.Get(ctx); err != nil {
		return nil, err
	}
	return load(s.path, controllerRate)
}

// Dynamic returns a client for the API's custom resources (kubeovn.io/v1 Subnets), once the
// kubeconfig loads (Get waits for it). It has its own rate limiter (dynamicRate).
func (s *Source) Dynamic(ctx context.Context) (dynamic.Interface, error) {
	if _, err := s.Get(ctx); err != nil {
		return nil, err
	}
	rc, err := restConfig(s.path, dynamicRate)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client: %w", err)
	}
	return dyn, nil
}
