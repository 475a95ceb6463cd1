package leader

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
)

// rightsRecheck is how long granted API rights are trusted before being asked again: RBAC
// rarely changes, and each check is a dozen reviews.
const rightsRecheck = time.Minute

// eligibility decides whether this host may hold the controller Lease: it must reach OVN
// northbound (a leader that cannot stalls every pod of the cluster) and have the API rights
// the controller role uses.
type eligibility struct {
	kube      AccessReviewer
	endpoints []string
	tls       *tls.Config
	rights    []right
	// record and identity are where the last grant is kept for the next process, and what
	// it was for (rightsrecord.go); "" turns the record off.
	record, identity string

	mu        sync.Mutex
	loaded    bool      // the record was read (once, at the first check)
	grantedAt time.Time // last time every right was granted
}

func newEligibility(cfg Config, kube AccessReviewer, tlsCfg *tls.Config) *eligibility {
	rights := controllerRights(cfg)
	return &eligibility{kube: kube, endpoints: cfg.NBEndpoints, tls: tlsCfg, rights: rights,
		record: cfg.RightsRecord, identity: rightsIdentity(cfg.Kubeconfig, rights)}
}

// check returns why this host may not lead now, or nil.
func (e *eligibility) check(ctx context.Context) error {
	if err := ovn.Probe(ctx, ovn.ProbeRequest{Endpoints: e.endpoints, TLS: e.tls, Database: "OVN_Northbound"}); err != nil {
		return err
	}
	return e.rightsGranted(ctx)
}

// rightsGranted asks the API server whether every right is granted, unless a grant younger
// than rightsRecheck is known: this process's, or the one the process before recorded.
func (e *eligibility) rightsGranted(ctx context.Context) error {
	e.mu.Lock()
	if !e.loaded {
		e.loaded, e.grantedAt = true, loadGrant(e.record, e.identity, time.Now())
	}
	fresh := !e.grantedAt.IsZero() && time.Since(e.grantedAt) < rightsRecheck
	e.mu.Unlock()
	if fresh {
		return nil
	}
	if err := checkRights(ctx, e.kube, e.rights); err != nil {
		return err
	}
	now := time.Now()
	_ = saveGrant(e.record, e.identity, now) // lost, it only costs the next start its reviews
	e.mu.Lock()
	e.grantedAt = now
	e.mu.Unlock()
	return nil
}
