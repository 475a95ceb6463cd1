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

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeconfigPoll is how often a missing kubeconfig is looked for again: it only runs until
// the file first appears, at boot.
const kubeconfigPoll = time.Second

// kubeSource hands out the API client once its kubeconfig exists. On a k3s server's first
// boot edgeovn starts before k3s has written /etc/rancher/k3s/k3s.yaml, and the node role must
// come up (and tell systemd) without it; what needs the API waits here.
type kubeSource struct {
	path string // "" means in-cluster
	log  *slog.Logger

	mu     sync.Mutex
	client kubernetes.Interface
}

// Get returns the client, waiting (until ctx ends) for the kubeconfig file to appear. A file
// that exists but does not load is an error.
func (s *kubeSource) Get(ctx context.Context) (kubernetes.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client != nil {
		return s.client, nil
	}
	if err := s.waitFile(ctx); err != nil {
		return nil, err
	}
	c, err := kubeClient(s.path)
	if err != nil {
		return nil, err
	}
	s.client = c
	return c, nil
}

func (s *kubeSource) waitFile(ctx context.Context) error {
	logged := false
	for s.path != "" {
		_, err := os.Stat(s.path)
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("kubeconfig %s: %w", s.path, err)
		}
		if !logged {
			s.log.Info("waiting for the kubeconfig; the node role runs meanwhile", "path", s.path)
			logged = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for kubeconfig %s: %w", s.path, ctx.Err())
		case <-time.After(kubeconfigPoll):
		}
	}
	return nil
}

func kubeClient(kubeconfig string) (kubernetes.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = 50, 100
	rc.UserAgent = "edgeovn"
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create kubernetes client: %w", err)
	}
	return kube, nil
}
