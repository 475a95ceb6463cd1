package subnets

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// SubnetFinalizer holds a deleted Subnet until no pod holds an address in it, and its switch,
// router port and IPAM subnet are gone.
const SubnetFinalizer = "edgeovn.io/subnet"

// Request is what the Subnets share with the rest of the controller role.
type Request struct {
	// Kube writes the namespaces' annotations; Dynamic reads and writes the Subnets and their
	// CRD.
	Kube    *kubeapi.Client
	Dynamic dynamic.Interface
	NB      *northbound.Client
	// IPAM holds each applied Subnet's addresses; the Subnets add, check and delete theirs.
	IPAM *ipam.IPAM
	// Events reports a refused Subnet.
	Events  record.EventRecorder
	Log     *slog.Logger
	Metrics *metrics.Metrics // nil: none
	// Pods names a deleted Subnet's holders; Nodes gives the addresses and host networks no
	// Subnet may overlap (nil: none checked).
	Pods  corelisters.PodLister
	Nodes corelisters.NodeLister
	// The configuration's networks: ovn-default's and join's (one prefix per family, IPv4
	// first, each gateway in its prefix's place), and the Service CIDRs.
	ClusterCIDRs    []netip.Prefix
	ClusterGateways []netip.Addr
	JoinCIDRs       []netip.Prefix
	ServiceCIDRs    []netip.Prefix
	Router          string // the cluster router the Subnets' switches are on
	// Services says the Services feature is on: each switch joins its load balancer group.
	Services bool
	// EnqueueUnallocated queues every pod that waits for an address: a subnet appeared.
	EnqueueUnallocated func()
}

// Controller turns kubeovn.io/v1 Subnets into IPAM subnets and logical switches on the
// cluster router (sync.go), isolates a private one with ACLs on its switch (acls.go), reports
// them in each Subnet's status (status.go), and chooses a pod's subnet from its own
// annotation, its namespace's binding or the default (namespaces.go). ovn-default and join
// come from the configuration and appear as Subnet objects too, as in Kube-OVN (builtin.go).
type Controller struct {
	req    Request
	dyn    dynamic.Interface
	log    *slog.Logger
	lister cache.GenericLister
	vlans  cache.GenericLister // kubeovn.io/v1 Vlans (underlay.go)
	pns    cache.GenericLister // kubeovn.io/v1 ProviderNetworks (vlanstatus.go)
	vpcs   cache.GenericLister // kubeovn.io/v1 Vpcs (vpc.go)
	// vlanPoke asks for the underlay statuses to be written again (vlanstatus.go).
	vlanPoke chan struct{}
	inf      cache.SharedIndexInformer
	nsList   corelisters.NamespaceLister
	queue    workqueue.TypedRateLimitingInterface[string] // Subnet names
	nsQ      workqueue.TypedRateLimitingInterface[string] // Namespace names
	stop     chan struct{}
	once     sync.Once
	// unannounced: isolation ACLs were written and nb_cfg not bumped since (acls.go).
	unannounced atomic.Bool

	mu sync.RWMutex
	// applied are the Subnets whose network is in the IPAM and northbound, by name: what pods
	// may be given addresses in, and what a later change is checked against.
	applied map[string]appliedSubnet
}

// appliedSubnet is a Subnet as edgeovn last applied it.
type appliedSubnet struct {
	net      kubeovn.Network
	spec     kubeovn.SubnetSpec
	created  time.Time
	deleting bool
	// u2o are the router's addresses on an underlay switch with u2oInterconnection (u2o.go).
	u2o []netip.Addr
	// gateway is a centralized Subnet's active gateway host (gateway.go), "" when none.
	gateway string
}

// New is the Subnets of one term; the controller prepares, registers, applies and runs them.
func New(req Request) *Controller {
	return &Controller{req: req, dyn: req.Dynamic, log: req.Log.With("feature", "subnets"), queue: queue.New("subnets"),
		nsQ: queue.New("namespaces"), stop: make(chan struct{}), applied: map[string]appliedSubnet{},
		vlanPoke: make(chan struct{}, 1)}
}

// Prepare installs the CRD when absent and starts creating the ovn-default and join Subnet
// objects from the configuration where they are missing (createBuiltins), in the background:
// the API server holds the first create of a resource it established less than 2 s ago for
// 2 s (apiextensions' justCreated wait), which was on the first pod's way on a new cluster.
// Until their objects exist, applyAll applies the built-in subnets from the configuration.
func (s *Controller) Prepare(ctx context.Context) error {
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := kubeovn.EnsureCRD(wait, s.dyn, s.log); err != nil {
		return err
	}
	go s.createBuiltins(ctx)
	return nil
}

// createBuiltins creates the built-in Subnet objects, retrying until each is there or ctx
// (the term) ends; their informer events then apply them as any Subnet.
func (s *Controller) createBuiltins(ctx context.Context) {
	for _, b := range s.builtins() {
		for delay := 100 * time.Millisecond; ; delay = min(2*delay, 5*time.Second) {
			err := s.ensureObject(ctx, b)
			if err == nil || ctx.Err() != nil {
				break
			}
			s.log.Warn("create built-in subnet object, will retry", "subnet", b.Name, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
		}
	}
}

// Register adds handlers to the term's Subnet informer (the vpcs and ovn-nat features' too;
// the factory runs it) and Namespace informer.
func (s *Controller) Register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	gi := f.Dynamic(s.dyn, kubeovn.SubnetResource)
	s.lister, s.inf = gi.Lister(), gi.Informer()
	onSubnet := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			s.queue.Add(key)
		}
		if u, ok := obj.(*unstructured.Unstructured); !ok || underlaySpec(u) {
			s.pokeVlanStatus() // a Vlan's status.subnets
		}
	}
	if _, err := s.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onSubnet, UpdateFunc: func(_, obj any) { onSubnet(obj) }, DeleteFunc: onSubnet,
	}); err != nil {
		return nil, fmt.Errorf("watch subnets: %w", err)
	}
	ns := f.Namespaces()
	s.nsList = ns.Lister()
	onNS := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			s.nsQ.Add(key)
		}
	}
	if _, err := ns.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onNS, UpdateFunc: func(_, obj any) { onNS(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch namespaces: %w", err)
	}
	vlansSynced, err := s.registerVlans()
	if err != nil {
		return nil, err
	}
	pnsSynced, err := s.registerProviderNetworks()
	if err != nil {
		return nil, err
	}
	vpcsSynced, err := s.registerVpcs(f)
	if err != nil {
		return nil, err
	}
	return []cache.InformerSynced{s.inf.HasSynced, ns.Informer().HasSynced, vlansSynced, pnsSynced, vpcsSynced}, nil
}

// ApplyAll applies every Subnet before the pods are reconciled: their claims name subnets
// the IPAM must know. A built-in subnet whose object is not created yet is applied from the
// configuration; its object, once there, is applied as any Subnet.
func (s *Controller) ApplyAll(ctx context.Context) error {
	for _, b := range s.builtins() {
		if _, ok, _ := s.inf.GetStore().GetByKey(b.Name); ok {
			continue // applied from its object below
		}
		if err := s.apply(ctx, b, s.configNetwork(b)); err != nil {
			return fmt.Errorf("apply built-in subnet %s from the configuration: %w", b.Name, err)
		}
	}
	for _, u := range s.oldestFirst() {
		if err := s.sync(ctx, u.GetName()); err != nil {
			return fmt.Errorf("apply subnet %s: %w", u.GetName(), err)
		}
	}
	return nil
}

// oldestFirst lists the Subnets oldest first, by name where created in the same second: of two
// that overlap, the one created first is applied and the other refused, whatever order the
// informer's store holds them in.
func (s *Controller) oldestFirst() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range s.inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		if c := a.GetCreationTimestamp().Compare(b.GetCreationTimestamp().Time); c != 0 {
			return c
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	return out
}

// Shutdown stops the Vlan and ProviderNetwork informers; the term's end calls it, whether run
// ran or not.
func (s *Controller) Shutdown() { s.once.Do(func() { close(s.stop) }) }

// Run processes Subnets and Namespaces until ctx ends.
func (s *Controller) Run(ctx context.Context) {
	go queue.Run(ctx, s.nsQ, queue.Worker{Kind: "namespace", Sync: s.syncNamespace, Log: s.req.Log, Metrics: s.req.Metrics})
	go s.runVlanStatus(ctx)
	s.pokeVlanStatus()
	queue.Run(ctx, s.queue, queue.Worker{Kind: "subnet", Sync: s.sync, Log: s.req.Log, Metrics: s.req.Metrics})
}

// Network is the network the subnet name was applied with; false when it is not applied.
func (s *Controller) Network(name string) (kubeovn.Network, bool) {
	a, ok := s.get(name)
	return a.net, ok
}

// get returns the applied subnet name.
func (s *Controller) get(name string) (appliedSubnet, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.applied[name]
	return a, ok
}

// Names returns the applied subnets' names, sorted.
func (s *Controller) Names() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.applied))
	for n := range s.applied {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (s *Controller) set(name string, a appliedSubnet) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied[name] = a
}

func (s *Controller) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.applied, name)
}

// Touched queues the subnet's status (its address counts) soon: allocations come in bursts,
// and one status write a second per subnet is enough.
func (s *Controller) Touched(name string) {
	if s != nil && name != "" {
		s.queue.AddAfter(name, time.Second)
	}
}
