package agent

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/edgeovn/edgeovn/ovn"
)

// rightsRecheck is how long granted API rights are trusted before being asked again: RBAC
// rarely changes, and each check is a dozen reviews.
const rightsRecheck = time.Minute

// eligibility decides whether this host may hold the controller Lease: it must reach OVN
// northbound (a leader that cannot stalls every pod of the cluster) and have the API rights
// the controller role uses.
type eligibility struct {
	kube      kubernetes.Interface
	endpoints []string
	tls       *tls.Config
	rights    []right

	mu        sync.Mutex
	grantedAt time.Time // last time every right was granted
}

func newEligibility(cfg Config, kube kubernetes.Interface, tlsCfg *tls.Config) *eligibility {
	return &eligibility{kube: kube, endpoints: cfg.NBEndpoints, tls: tlsCfg, rights: controllerRights(cfg)}
}

// check returns why this host may not lead now, or nil.
func (e *eligibility) check(ctx context.Context) error {
	if err := ovn.Probe(ctx, ovn.ProbeRequest{Endpoints: e.endpoints, TLS: e.tls, Database: "OVN_Northbound"}); err != nil {
		return err
	}
	e.mu.Lock()
	fresh := time.Since(e.grantedAt) < rightsRecheck
	e.mu.Unlock()
	if fresh {
		return nil
	}
	if err := checkRights(ctx, e.kube, e.rights); err != nil {
		return err
	}
	e.mu.Lock()
	e.grantedAt = time.Now()
	e.mu.Unlock()
	return nil
}
