package kubeapi

import (
	"context"
	"fmt"

	"k8s.io/client-go/dynamic"
)

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
