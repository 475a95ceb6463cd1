package ovnnat

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Finalizer holds a deleted OvnEip, OvnFip or OvnSnatRule until its rows and address are gone.
const Finalizer = "edgeovn.io/ovn-nat"

// Request is what the OVN NAT family shares with the rest of the controller role.
type Request struct {
	// Dynamic reads the kubeovn.io objects and the ConfigMap ovn-external-gw-config, and
	// writes the NAT objects' status and finalizers (their CRDs are installed with the others).
	Dynamic dynamic.Interface
	NB      *northbound.Client
	// IPAM allocates the EIPs in their external Subnet (owner "ovn-eip:<name>").
	IPAM    *ipam.IPAM
	Events  record.EventRecorder
	Log     *slog.Logger
	Metrics *metrics.Metrics // nil: none
	// ProbeEvery is how often the family looks for its first object while it has none
	// (gate.go; 0: DefaultProbeEvery).
	ProbeEvery time.Duration
}

// Controller is Kube-OVN's OVN NAT family: a Vpc's external link (enableExternal, external.go),
// OvnEips (eip.go), OvnFips (fip.go), OvnSnatRules (snat.go) and OvnDnatRules (dnat.go).
type Controller struct {
	req   Request
	log   *slog.Logger
	infs  map[string]cache.SharedIndexInformer         // vpc and subnet: the term's shared informers
	gate  *gate                                        // eip, fip, snat and dnat: started only when used
	queue workqueue.TypedRateLimitingInterface[string] // "<kind>/<name>"
	first *firstLook                                   // the term's first look (Probe), nil before
}

// kinds are the informers the family watches, by the prefix of their queue keys.
var kinds = map[string]schema.GroupVersionResource{
	"vpc":    kubeovn.VpcResource,
	"subnet": kubeovn.SubnetResource,
	"eip":    kubeovn.OvnEipResource,
	"fip":    kubeovn.OvnFipResource,
	"snat":   kubeovn.OvnSnatRuleResource,
	"dnat":   kubeovn.OvnDnatRuleResource,
}

// New is the family of one term; the controller registers, reconciles and runs it.
func New(req Request) *Controller {
	if req.ProbeEvery <= 0 {
		req.ProbeEvery = DefaultProbeEvery
	}
	return &Controller{req: req, log: req.Log.With("feature", "ovn-nat"),
		infs: map[string]cache.SharedIndexInformer{}, gate: newGate(), queue: queue.New("ovn-nat")}
}

// Name is the feature's name in logs.
func (c *Controller) Name() string { return "ovn-nat" }

// Register adds handlers to the shared Vpc and Subnet informers (the NAT kinds' own informers
// start only when used: gate.go). Every change queues the object and everything that may
// depend on it (few objects: a Vpc's change queues every FIP and SNAT rule, an EIP's every
// user); a Vpc asking for enableExternal opens a closed gate at once.
func (c *Controller) Register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	var synced []cache.InformerSynced
	for _, kind := range []string{"vpc", "subnet"} {
		gvr := kinds[kind]
		inf := f.Dynamic(c.req.Dynamic, gvr)
		c.infs[kind] = inf.Informer()
		on := func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok && kind == "vpc" && wantsExternal(u) && !c.gate.isOpen() {
				c.gate.poke()
			}
			c.changed(kind, obj)
		}
		if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }, DeleteFunc: on,
		}); err != nil {
			return nil, fmt.Errorf("watch %s: %w", gvr.Resource, err)
		}
		synced = append(synced, inf.Informer().HasSynced)
	}
	return synced, nil
}

// changed queues what an event of kind may change.
func (c *Controller) changed(kind string, obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	deps := map[string][]string{
		"vpc":    {"vpc", "fip", "snat", "dnat"},
		"subnet": {"vpc", "eip", "fip", "snat", "dnat"},
		"eip":    {"vpc", "fip", "snat", "dnat"},
		"fip":    {"eip", "fip"},
		"snat":   {"eip"},
		"dnat":   {"eip", "dnat"},
	}[kind]
	if kind != "subnet" {
		c.queue.Add(kind + "/" + key)
	}
	for _, d := range deps {
		for _, k := range c.store(d).ListKeys() {
			c.queue.Add(d + "/" + k)
		}
	}
}

// Reconcile syncs every object, then removes the rows of objects deleted while no controller
// ran (their owners in northbound without an object).
func (c *Controller) Reconcile(ctx context.Context) error {
	for _, kind := range []string{"eip", "vpc", "fip", "snat", "dnat"} {
		for _, k := range c.store(kind).ListKeys() {
			if err := c.sync(ctx, kind+"/"+k); err != nil {
				return err
			}
		}
	}
	for kind, ownerKind := range map[string]string{"vpc": ovn.KindVpcExternal, "fip": ovn.KindOvnFip, "snat": ovn.KindOvnSnatRule, "dnat": ovn.KindOvnDnatRule} {
		names, err := c.req.NB.OwnedNames(ctx, ownerKind)
		if err != nil {
			return err
		}
		for _, n := range names {
			if _, ok, _ := c.store(kind).GetByKey(n); !ok {
				if err := c.sync(ctx, kind+"/"+n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Run processes the family's keys until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.runGate(ctx) })
	queue.Run(ctx, c.queue, queue.Worker{Kind: "ovn-nat", Sync: c.sync, Log: c.req.Log, Metrics: c.req.Metrics})
}

func (c *Controller) sync(ctx context.Context, key string) error {
	kind, name, _ := strings.Cut(key, "/")
	var err error
	switch kind {
	case "vpc":
		err = c.syncVpc(ctx, name)
	case "eip":
		err = c.syncEip(ctx, name)
	case "fip":
		err = c.syncFip(ctx, name)
	case "snat":
		err = c.syncSnat(ctx, name)
	case "dnat":
		err = c.syncDnat(ctx, name)
	}
	if err != nil {
		return fmt.Errorf("sync %s %s: %w", kind, name, err)
	}
	return nil
}
