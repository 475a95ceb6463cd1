package controller

import (
	"context"

	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/ipam"
)

// feature is a part of the controller role with informers and rows of its own (Services as
// load balancers, package services; NetworkPolicies as ACLs, package policies). The
// controller runs each enabled feature (enabled.go) in the same term of leadership: register
// before the informers start, reconcile once every cache has synced and the IPAM has been
// reconciled, then run until ctx ends. A feature gets what it shares with the core (the
// northbound client, the event recorder, the logger, the metrics) in its own Request, and
// its listers from the term's informers, never the Controller.
type feature interface {
	// Name is the feature's name in logs.
	Name() string
	// Register adds the feature's informers and event handlers to the factory and returns
	// what must have synced before reconcile.
	Register(f *kubeapi.Informers) ([]cache.InformerSynced, error)
	// Reconcile brings the feature's northbound rows to the desired state from the caches,
	// removing rows of objects that are gone; it writes nothing when nothing changed.
	Reconcile(ctx context.Context) error
	// Run processes the feature's work until ctx ends.
	Run(ctx context.Context)
}

// claimer is a feature that holds IPAM allocations of its own (the OVN NAT family's EIPs):
// the IPAM reconcile at the start of a term keeps what Claims returns (read from the
// feature's caches, synced by then) and releases the rest, as for pods.
type claimer interface {
	Claims() []ipam.Allocation
}

// opener is a feature whose informers start only when the cluster has its objects (the OVN
// NAT family): Probe runs as the term starts and looks for its objects in the background;
// Open runs once the term's caches have synced and before the IPAM reconcile (which reads its
// Claims): it takes Probe's answer and, when there are objects, starts and syncs its
// informers. After that the feature opens and closes them itself while it runs.
type opener interface {
	Probe(ctx context.Context)
	Open(ctx context.Context) error
}
