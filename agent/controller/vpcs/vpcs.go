package vpcs

import (
	"context"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// VpcFinalizer holds a deleted Vpc until no Subnet names it and its rows are gone.
const VpcFinalizer = "edgeovn.io/vpc"

// Request is what the Vpcs share with the rest of the controller role.
type Request struct {
	// Dynamic reads the Vpcs and Subnets and writes the Vpcs' status and finalizer (the CRD
	// is installed by the Subnets' Prepare, with the other kubeovn.io CRDs).
	Dynamic dynamic.Interface
	NB      *northbound.Client
	// Events reports a refused Vpc.
	Events  record.EventRecorder
	Log     *slog.Logger
	Metrics *metrics.Metrics // nil: none
}

// Controller turns kubeovn.io/v1 Vpcs into logical routers with their static routes and
// policies (sync.go) and reports them in each Vpc's status (status.go).
type Controller struct {
	req     Request
	log     *slog.Logger
	vpcs    cache.GenericLister
	subnets cache.GenericLister
	infs    []cache.SharedIndexInformer
	queue   workqueue.TypedRateLimitingInterface[string] // Vpc names
}

// New is the Vpcs of one term; the controller registers, reconciles and runs them.
func New(req Request) *Controller {
	return &Controller{req: req, log: req.Log.With("feature", "vpcs"), queue: queue.New("vpcs")}
}

// Name is the feature's name in logs.
func (c *Controller) Name() string { return "vpcs" }

// Register adds handlers to the term's Vpc and Subnet informers (shared with the Subnets and
// ovn-nat; a Subnet that names a Vpc changes its status and the next hops its routes may use).
func (c *Controller) Register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	vi := f.Dynamic(c.req.Dynamic, kubeovn.VpcResource)
	si := f.Dynamic(c.req.Dynamic, kubeovn.SubnetResource)
	c.vpcs, c.subnets = vi.Lister(), si.Lister()
	onVpc := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
		// A Vpc peering with it may have waited for it (few Vpcs: all of them are queued).
		for _, key := range c.infs[0].GetStore().ListKeys() {
			c.queue.Add(key)
		}
	}
	onSubnet := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if v, _, _ := unstructured.NestedString(u.Object, "spec", "vpc"); v != "" && v != kubeovn.DefaultVpc {
				c.queue.Add(v)
			}
		}
	}
	for _, h := range []struct {
		inf cache.SharedIndexInformer
		on  func(any)
	}{{vi.Informer(), onVpc}, {si.Informer(), onSubnet}} {
		on := h.on
		if _, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }, DeleteFunc: on,
		}); err != nil {
			return nil, fmt.Errorf("watch vpcs: %w", err)
		}
		c.infs = append(c.infs, h.inf)
	}
	return []cache.InformerSynced{c.infs[0].HasSynced, c.infs[1].HasSynced}, nil
}

// Reconcile syncs every Vpc, then removes the rows of Vpcs deleted while no controller ran.
func (c *Controller) Reconcile(ctx context.Context) error {
	for _, name := range c.infs[0].GetStore().ListKeys() {
		if err := c.sync(ctx, name); err != nil {
			return fmt.Errorf("sync vpc %s: %w", name, err)
		}
	}
	owners, err := c.req.NB.VpcRouters(ctx)
	if err != nil {
		return err
	}
	for _, name := range owners {
		if _, err := c.vpcs.Get(name); err == nil {
			continue
		}
		if err := c.gone(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

// Run processes Vpcs until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	queue.Run(ctx, c.queue, queue.Worker{Kind: "vpc", Sync: c.sync, Log: c.req.Log, Metrics: c.req.Metrics})
}

// gone removes the rows of a Vpc whose object no longer exists (its router stays while a
// Subnet's switch is still attached to it).
func (c *Controller) gone(ctx context.Context, name string) error {
	n, err := c.req.NB.DeleteOwned(ctx, northbound.OwnerRef{Kind: ovn.KindVpc, Name: name})
	if err != nil {
		return err
	}
	if n > 0 {
		c.log.Info("vpc removed", "vpc", name, "rows", n)
	}
	return nil
}
