package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/controller/subnets"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/southbound"
)

// Request is what the controller role runs with.
type Request struct {
	Kube *kubeapi.Client
	// Dynamic reads and writes kubeovn.io/v1 Subnets and their CRD.
	Dynamic dynamic.Interface
	// Cluster and Controller are the role's options, handed down whole from the daemon's
	// Config. Workers is at least 1: its one default is config.Default's, a zero is refused.
	// No SBEndpoints: a deleted node's chassis is left to the operator (ovn-sbctl chassis-del).
	config.Cluster
	config.Controller
	Router string      // "ovn-cluster"
	TLS    *tls.Config // for ssl: NB endpoints
	// Metrics counts the role's IPAM changes, NB transactions and reconciles and exports its
	// IPAM's usage while the term lasts; nil: none.
	Metrics *metrics.Metrics
	Log     *slog.Logger
}

// Controller holds the role's state for one term of leadership.
type Controller struct {
	req  Request
	log  *slog.Logger
	ipam *ipam.IPAM
	nb   *northbound.Client
	// chassis removes a deleted node's chassis from the southbound; nil: not done.
	chassis chassisRemover
	pods    corelisters.PodLister
	nodes   corelisters.NodeLister
	// podsByNode finds a node's pods (index byNodeIndex) without a scan of every pod.
	podsByNode cache.Indexer
	// queue holds pod keys, those of pods awaiting their allocation first (awaitsAllocation).
	queue workqueue.TypedRateLimitingInterface[string]
	// nodeQueue holds node names: a node's join port, and its pods' addresses for the
	// distributed gateway, change with its own events and with its pods'.
	nodeQueue workqueue.TypedRateLimitingInterface[string]
	// events reports allocation problems on the pods concerned.
	events record.EventRecorder
	// conflicts marks pods whose annotated address lost to an older claim: their port is
	// never (re)created, so OVN never holds one address twice.
	conflicts sync.Map
	// statefulSets is the slimmed StatefulSet cache: whether a deleted pod's address stays.
	statefulSets appslisters.StatefulSetLister
	// stsQueue holds StatefulSet keys whose change may release kept addresses.
	stsQueue workqueue.TypedRateLimitingInterface[string]
	// kept marks the pods whose address is kept for their StatefulSet (logged once).
	kept sync.Map
	// waiting are the pods waiting for an address another pod holds.
	waiting waiters
	// features are the enabled parts with informers of their own (Services, policies).
	features []feature
	// subnets are the kubeovn.io/v1 Subnets and the namespaces' choice of them (package
	// subnets); nil until the term's stores are open.
	subnets *subnets.Controller
	// subnetsRegistered is subnets once its informer is registered: what the node handlers,
	// running from the informers' start, may use (enqueueSubnets).
	subnetsRegistered atomic.Pointer[subnets.Controller]
	// holdPod is HoldAfterPortEnv's pod, "" in production.
	holdPod string
	// phases times the term's start.
	phases *termPhases
}

// Run runs the controller role until ctx ends (leadership lost or shutdown).
func Run(ctx context.Context, req Request) error {
	if req.Workers < 1 {
		return fmt.Errorf("workers %d: at least 1 (--controller-workers)", req.Workers)
	}
	c := &Controller{req: req, log: req.Log, nodeQueue: queue.New("nodes"),
		stsQueue: queue.New("statefulsets"), holdPod: holdPodFromEnv(), phases: newTermPhases()}
	c.queue = queue.NewPriority("pods", c.awaitsAllocation)
	defer c.queue.ShutDown()
	defer c.nodeQueue.ShutDown()
	defer c.stsQueue.ShutDown()
	// The pods' and nodes' initial lists load while the IPAM opens and northbound connects
	// (the API server's work and the decoding overlap the connection's on two cores: 25-30 ms
	// less to a restart's first allocation with 1,000 pods, the same under load; README).
	// Their handlers only queue keys: nothing is synced before run.
	inf, err := c.startInformers(ctx)
	if err != nil {
		return err
	}
	defer inf.stop()
	closeStores, err := c.openStores(ctx)
	defer closeStores()
	if err != nil {
		return err
	}
	var stopEvents func()
	c.events, stopEvents = newRecorder(ctx, req.Kube)
	defer stopEvents()
	c.features = c.enabledFeatures() // after the recorder: they are handed it
	for _, f := range c.features {
		if o, ok := f.(opener); ok {
			o.Probe(ctx) // its lists run beside the topology and the caches' sync
		}
	}
	if err := c.ensureTopology(ctx); err != nil {
		return err
	}
	c.subnets = c.newSubnets()
	if err := c.subnets.Prepare(ctx); err != nil {
		return err
	}
	c.phases.mark("topology")
	return c.run(ctx, inf)
}

// openStores opens the IPAM and connects to OVN; the returned function closes what was
// opened, also after an error.
func (c *Controller) openStores(ctx context.Context) (func(), error) {
	var closers []func()
	closeAll := func() {
		for _, f := range slices.Backward(closers) {
			f()
		}
	}
	req := c.req
	store, movedTo, err := sqlitestore.OpenOrReset(ctx, req.IPAMDatabase, req.Log)
	if err != nil {
		return closeAll, fmt.Errorf("open ipam database %s: %w", req.IPAMDatabase, err)
	}
	closers = append(closers, func() { store.Close() })
	if movedTo != "" {
		req.Log.Error("ipam database was damaged: moved aside, rebuilding from the cluster", "path", req.IPAMDatabase, "moved_to", movedTo)
	}
	if c.ipam, err = ipam.New(ctx, req.Metrics.CountIPAM(store), req.Log); err != nil {
		return closeAll, fmt.Errorf("load ipam: %w", err)
	}
	req.Metrics.SetIPAM(c.ipam)
	closers = append(closers, func() { req.Metrics.SetIPAM(nil) })
	c.phases.mark("ipam")
	if c.nb, err = northbound.Connect(ctx, ovn.ConnectRequest{Endpoints: req.NBEndpoints, TLS: req.TLS, Log: req.Log,
		Metrics: req.Metrics.NBTransactions()}); err != nil {
		return closeAll, fmt.Errorf("connect ovn northbound: %w", err)
	}
	closers = append(closers, c.nb.Close)
	c.phases.mark("northbound")
	if len(req.SBEndpoints) > 0 {
		sb, err := southbound.Connect(ctx, ovn.ConnectRequest{Endpoints: req.SBEndpoints, TLS: req.TLS, Log: req.Log})
		if err != nil {
			return closeAll, fmt.Errorf("connect ovn southbound: %w", err)
		}
		closers = append(closers, sb.Close)
		c.chassis = sb
	}
	return closeAll, nil
}

func (c *Controller) ensureTopology(ctx context.Context) error {
	r := c.req
	joins, joinGWs := r.JoinCIDRs(), r.JoinGateways()
	cluster := northbound.ClusterSpec{Router: r.Router, JoinSwitch: "join", JoinCIDR: joins[0], JoinGateway: joinGWs[0]}
	if len(joins) == 2 {
		cluster.JoinDualCIDR, cluster.JoinDualGateway = joins[1], joinGWs[1]
	}
	if err := c.nb.EnsureCluster(ctx, cluster); err != nil {
		return fmt.Errorf("ensure cluster router %s: %w", r.Router, err)
	}
	if err := c.nb.EnsureSubnet(ctx, northbound.SubnetSpec{Name: kubeovn.DefaultSubnet, Router: r.Router,
		CIDR: r.ClusterCIDR, Gateway: r.ClusterGateway, DualCIDR: r.ClusterCIDRDual, DualGateway: r.ClusterGatewayDual}); err != nil {
		return fmt.Errorf("ensure subnet %s: %w", kubeovn.DefaultSubnet, err)
	}
	// The default route of each family points at the router's own join address, as in
	// Kube-OVN: routing then finds a route for outside addresses, and the policies after it
	// reroute each node's pods to their own host.
	for i, p := range joins {
		def := netip.PrefixFrom(netip.IPv4Unspecified(), 0)
		if p.Addr().Is6() {
			def = netip.PrefixFrom(netip.IPv6Unspecified(), 0)
		}
		if err := c.nb.EnsureStaticRoute(ctx, northbound.StaticRouteSpec{Router: r.Router, Prefix: def,
			NextHop: joinGWs[i], Owner: northbound.OwnerRef{Kind: ovn.KindCluster, Name: r.Router}}); err != nil {
			return fmt.Errorf("ensure default route %s of %s: %w", def, r.Router, err)
		}
	}
	if err := c.ensureAllowPolicies(ctx); err != nil {
		return err
	}
	for _, sn := range []ipam.Subnet{
		{Name: kubeovn.DefaultSubnet, CIDRs: r.ClusterCIDRs(), Gateways: r.ClusterGateways()},
		{Name: kubeovn.JoinSubnet, CIDRs: joins, Gateways: joinGWs},
	} {
		if err := c.ipam.EnsureSubnet(ctx, sn); err != nil {
			return fmt.Errorf("ensure ipam subnet %s: %w", sn.Name, err)
		}
	}
	return nil
}

// ensureAllowPolicies keeps traffic to the cluster's own networks (the subnet, the join
// network, each family) on its way, ahead of the distributed gateway's reroutes of a node's
// pods, as Kube-OVN does: a pod answering another host's ovn0 must not be sent to its own
// host.
func (c *Controller) ensureAllowPolicies(ctx context.Context) error {
	r := c.req
	allow := func(p netip.Prefix, owner northbound.OwnerRef) northbound.RouterPolicySpec {
		match := "ip4.dst == " + p.Masked().String()
		if p.Addr().Is6() {
			match = "ip6.dst == " + p.Masked().String()
		}
		return northbound.RouterPolicySpec{Router: r.Router, Priority: northbound.NodeRoutePriority, Match: match,
			Action: nbdb.LogicalRouterPolicyActionAllow, Owner: owner}
	}
	var policies []northbound.RouterPolicySpec
	for _, p := range r.JoinCIDRs() {
		policies = append(policies, allow(p, northbound.OwnerRef{Kind: ovn.KindCluster, Name: r.Router}))
	}
	for _, p := range r.ClusterCIDRs() {
		policies = append(policies, allow(p, northbound.OwnerRef{Kind: ovn.KindSubnet, Name: kubeovn.DefaultSubnet}))
	}
	for _, p := range policies {
		if err := c.nb.EnsureRouterPolicy(ctx, p); err != nil {
			return fmt.Errorf("ensure router policy %q: %w", p.Match, err)
		}
	}
	return nil
}

// enqueueSubnets queues every Subnet for its check against the Nodes, once the Subnets'
// informer is registered; before that, the first ApplyAll checks them all anyway. The node
// handlers that call it run from the start of the informers, before c.subnets is set.
func (c *Controller) enqueueSubnets() {
	if s := c.subnetsRegistered.Load(); s != nil {
		s.EnqueueAll()
	}
}

func (c *Controller) run(ctx context.Context, inf *termInformers) error {
	stsSynced, err := c.registerStatefulSets(inf.factory)
	if err != nil {
		return err
	}
	synced := append(inf.synced, stsSynced)
	subnetsSynced, err := c.subnets.Register(inf.factory)
	defer c.subnets.Shutdown()
	if err != nil {
		return err
	}
	c.subnetsRegistered.Store(c.subnets)
	synced = append(synced, subnetsSynced...)
	for _, f := range c.features {
		s, err := f.Register(inf.factory)
		if err != nil {
			return fmt.Errorf("register %s: %w", f.Name(), err)
		}
		synced = append(synced, s...)
	}
	inf.factory.Start(inf.ctx) // the informers registered since the first start
	if err := waitSynced(ctx, synced); err != nil {
		return err
	}
	c.phases.mark("caches")
	for _, f := range c.features {
		if o, ok := f.(opener); ok {
			if err := o.Open(ctx); err != nil {
				return fmt.Errorf("open %s: %w", f.Name(), err)
			}
		}
	}
	c.phases.mark("opened")
	if err := c.subnets.ApplyAll(ctx); err != nil {
		return err
	}
	if err := c.reconcile(ctx); err != nil {
		return err
	}
	if err := c.subnets.RemoveGone(ctx); err != nil {
		return err
	}
	c.enqueueStale(ctx)
	c.phases.mark("reconcile")
	for _, f := range c.features {
		if err := f.Reconcile(ctx); err != nil {
			return fmt.Errorf("reconcile %s: %w", f.Name(), err)
		}
	}
	c.phases.mark("features")
	c.log.Info("controller role running", append([]any{"workers", c.req.Workers, "features", len(c.features)}, c.phases.attrs...)...)
	g, ctx := errgroup.WithContext(ctx)
	for range c.req.Workers {
		g.Go(func() error { c.work(ctx, c.queue, "pod", c.syncPod); return nil })
	}
	g.Go(func() error { c.work(ctx, c.nodeQueue, "node", c.syncNode); return nil })
	g.Go(func() error { c.work(ctx, c.stsQueue, "statefulset", c.syncStatefulSet); return nil })
	g.Go(func() error { c.subnets.Run(ctx); return nil })
	for _, f := range c.features {
		g.Go(func() error { f.Run(ctx); return nil })
	}
	<-ctx.Done()
	c.queue.ShutDown()
	c.nodeQueue.ShutDown()
	c.stsQueue.ShutDown()
	return g.Wait()
}

// watch queues pods by key and nodes by name; a pod's event also queues its node, whose
// distributed gateway matches the node's pods by address.
func (c *Controller) watch(pods, nodes cache.SharedIndexInformer) error {
	onPod := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			c.nodeQueue.Add(p.Spec.NodeName)
		}
	}
	if _, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) }, DeleteFunc: onPod,
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	onNode := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.nodeQueue.Add(key)
		}
	}
	// A Node's addresses and host networks are what Subnets are checked against.
	onNodeUpdate := func(old, obj any) {
		onNode(obj)
		if o, n := old.(*corev1.Node), obj.(*corev1.Node); o != nil && n != nil && (subnets.HostNetworksChanged(o, n) || subnets.GatewayChanged(o, n)) {
			c.enqueueSubnets()
		}
	}
	onNodeAdd := func(obj any) {
		onNode(obj)
		c.enqueueSubnets()
	}
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onNodeAdd, UpdateFunc: onNodeUpdate, DeleteFunc: onNodeAdd, // a deleted gateway host too
	}); err != nil {
		return fmt.Errorf("watch nodes: %w", err)
	}
	return nil
}

// work processes keys of one of the core's queues until it shuts down (queue.Work).
func (c *Controller) work(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], kind string, sync func(context.Context, string) error) {
	queue.Work(ctx, q, queue.Worker{Kind: kind, Sync: sync, Log: c.log, Metrics: c.req.Metrics})
}

// newSubnets is the term's Subnets, given what they share with the core.
func (c *Controller) newSubnets() *subnets.Controller {
	r := c.req
	return subnets.New(subnets.Request{Kube: r.Kube, Dynamic: r.Dynamic, NB: c.nb, IPAM: c.ipam, Events: c.events,
		Log: c.log, Metrics: r.Metrics, Pods: c.pods, Nodes: c.nodes, ClusterCIDRs: r.ClusterCIDRs(),
		ClusterGateways: r.ClusterGateways(), JoinCIDRs: r.JoinCIDRs(), ServiceCIDRs: r.ServiceCIDRs, Router: r.Router,
		Services: r.Services, EnqueueUnallocated: c.enqueueUnallocated})
}
