package benchkit

import (
	"context"
	"fmt"

	"github.com/ovn-org/libovsdb/client"
	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// Clients are a bench's own view of the rig: an API client whose rate limit is never the
// bottleneck and a northbound client whose cache shows what edgeovn wrote the moment the
// database has it.
type Clients struct {
	Kube kubernetes.Interface
	NB   client.Client
}

// Connect opens both clients on the rig; Close releases the northbound one.
func Connect(ctx context.Context, rig *harness.Rig) (*Clients, error) {
	cfg := rig.RESTConfig()
	cfg.QPS, cfg.Burst = 2000, 4000
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("bench api client: %w", err)
	}
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("bench northbound model: %w", err)
	}
	nb, err := ovn.Connect(ctx, ovn.ConnectRequest{Endpoints: harness.SplitEndpoints(rig.NBEndpoint)}, dbModel)
	if err != nil {
		return nil, fmt.Errorf("bench northbound client: %w", err)
	}
	return &Clients{Kube: kube, NB: nb}, nil
}

// Close closes the northbound client.
func (c *Clients) Close() { c.NB.Close() }
