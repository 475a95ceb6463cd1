package agent

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// Dynamic returns a client for the API's custom resources (kubeovn.io/v1 Subnets), once the
// kubeconfig loads (Get waits for it). It has its own rate limiter: Subnets are few and must
// not wait behind a burst of pods.
func (s *kubeSource) Dynamic(ctx context.Context) (dynamic.Interface, error) {
	if _, err := s.Get(ctx); err != nil {
		return nil, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", s.path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %q: %w", s.path, err)
	}
	rc.QPS, rc.Burst = 20, 40
	rc.UserAgent = "edgeovn"
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("create dynamic client: %w", err)
	}
	return dyn, nil
}
