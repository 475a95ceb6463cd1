package controller

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// feature is a part of the controller role with informers and rows of its own (Services as
// load balancers, NetworkPolicies as ACLs). The controller runs each enabled feature in the
// same term of leadership: register before the informers start, reconcile once every cache
// has synced and the IPAM has been reconciled, then run until ctx ends.
type feature interface {
	// name is the feature's name in logs.
	name() string
	// register adds the feature's informers and event handlers to the factory and returns
	// what must have synced before reconcile.
	register(f *kubeapi.Informers) ([]cache.InformerSynced, error)
	// reconcile brings the feature's northbound rows to the desired state from the caches,
	// removing rows of objects that are gone; it writes nothing when nothing changed.
	reconcile(ctx context.Context) error
	// run processes the feature's work until ctx ends.
	run(ctx context.Context)
}
