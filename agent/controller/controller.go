package controller

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// DefaultSubnet is the logical switch of the cluster CIDR, as in Kube-OVN.
const DefaultSubnet = "ovn-default"

// Request is what the controller role runs with.
type Request struct {
	Kube           kubernetes.Interface
	NBEndpoints    []string
	IPAMDatabase   string
	ClusterCIDR    netip.Prefix
	ClusterGateway netip.Addr
	JoinCIDR       netip.Prefix
	Router         string // "ovn-cluster"
	Workers        int
	TLS            *tls.Config // for ssl: NB endpoints
	Log            *slog.Logger
}

// Controller holds the role's state for one term of leadership.
type Controller struct {
	req   Request
	log   *slog.Logger
	ipam  *ipam.IPAM
	nb    *northbound.Client
	pods  corelisters.PodLister
	queue workqueue.TypedRateLimitingInterface[string]
	// events reports allocation problems on the pods concerned.
	events record.EventRecorder
	// conflicts marks pods whose annotated address lost to an older claim: their port is
	// never (re)created, so OVN never holds one address twice.
	conflicts sync.Map
}

// Run runs the controller role until ctx ends (leadership lost or shutdown).
func Run(ctx context.Context, req Request) error {
	if req.Workers <= 0 {
		req.Workers = 2
	}
	store, movedTo, err := sqlitestore.OpenOrReset(ctx, req.IPAMDatabase, req.Log)
	if err != nil {
		return fmt.Errorf("open ipam database %s: %w", req.IPAMDatabase, err)
	}
	defer store.Close()
	if movedTo != "" {
		req.Log.Error("ipam database was damaged: moved aside, rebuilding from the cluster", "path", req.IPAMDatabase, "moved_to", movedTo)
	}
	m, err := ipam.New(ctx, store, req.Log)
	if err != nil {
		return fmt.Errorf("load ipam: %w", err)
	}
	nb, err := northbound.Connect(ctx, ovn.ConnectRequest{Endpoints: req.NBEndpoints, TLS: req.TLS, Log: req.Log})
	if err != nil {
		return fmt.Errorf("connect ovn northbound: %w", err)
	}
	defer nb.Close()
	c := &Controller{req: req, log: req.Log, ipam: m, nb: nb,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"})}
	defer c.queue.ShutDown()
	var stopEvents func()
	c.events, stopEvents = newRecorder(ctx, req.Kube)
	defer stopEvents()
	if err := c.ensureTopology(ctx); err != nil {
		return err
	}
	return c.run(ctx)
}

func (c *Controller) ensureTopology(ctx context.Context) error {
	r := c.req
	joinGW := r.JoinCIDR.Masked().Addr().Next()
	if err := c.nb.EnsureCluster(ctx, northbound.ClusterSpec{Router: r.Router, JoinSwitch: "join",
		JoinCIDR: r.JoinCIDR, JoinGateway: joinGW}); err != nil {
		return fmt.Errorf("ensure cluster router %s: %w", r.Router, err)
	}
	if err := c.nb.EnsureSubnet(ctx, northbound.SubnetSpec{Name: DefaultSubnet, Router: r.Router,
		CIDR: r.ClusterCIDR, Gateway: r.ClusterGateway}); err != nil {
		return fmt.Errorf("ensure subnet %s: %w", DefaultSubnet, err)
	}
	err := c.ipam.EnsureSubnet(ctx, ipam.Subnet{Name: DefaultSubnet,
		CIDRs: []netip.Prefix{r.ClusterCIDR}, Gateways: []netip.Addr{r.ClusterGateway}})
	if err != nil {
		return fmt.Errorf("ensure ipam subnet %s: %w", DefaultSubnet, err)
	}
	return nil
}

func (c *Controller) run(ctx context.Context) error {
	factory := informers.NewSharedInformerFactory(c.req.Kube, 0)
	podInformer := factory.Core().V1().Pods()
	c.pods = podInformer.Lister()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		return fmt.Errorf("sync pod cache: %w", ctx.Err())
	}
	if err := c.reconcile(ctx); err != nil {
		return err
	}
	c.enqueueStale(ctx)
	c.log.Info("controller role running", "workers", c.req.Workers)
	g, ctx := errgroup.WithContext(ctx)
	for range c.req.Workers {
		g.Go(func() error { c.work(ctx); return nil })
	}
	<-ctx.Done()
	c.queue.ShutDown()
	return g.Wait()
}

func (c *Controller) work(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		start := time.Now()
		err := c.syncPod(ctx, key)
		c.queue.Done(key)
		if err != nil {
			c.log.Warn("sync pod, will retry", "pod", key, "err", err)
			c.queue.AddRateLimited(key)
			continue
		}
		c.queue.Forget(key)
		c.log.Debug("synced pod", "pod", key, "duration", time.Since(start))
	}
}
