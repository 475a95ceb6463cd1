package ovnnat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// DefaultProbeEvery is how often a closed gate looks for a first NAT object (Request.ProbeEvery).
const DefaultProbeEvery = 10 * time.Second

// gatedKinds are the kinds whose informers run only while the gate is open: the NAT objects
// themselves. Vpcs and Subnets come from the term's shared informers, which the Vpc and Subnet
// controllers run anyway.
var gatedKinds = []string{"eip", "fip", "snat", "dnat"}

// gate runs the informers of gatedKinds only while the cluster has a NAT object or a Vpc asks
// for enableExternal (which makes an OvnEip): "pay only for what is used". Closed, its stores
// are empty, which is the truth (the probe found no object), so every sync reads "none".
// Opening starts the informers, and the stores are swapped in only once every one has synced:
// a sync never sees half of the family.
type gate struct {
	mu     sync.RWMutex
	stores map[string]cache.Indexer // by gated kind: the informers' while open, empty ones closed
	stop   context.CancelFunc       // nil: closed
	done   sync.WaitGroup           // the running informers
	ready  atomic.Bool              // open and synced: the informers' events are queued
	wake   chan struct{}            // a Vpc with enableExternal appeared while closed
}

func newGate() *gate {
	g := &gate{wake: make(chan struct{}, 1)}
	g.setEmpty()
	return g
}

func (g *gate) setEmpty() {
	g.stores = map[string]cache.Indexer{}
	for _, k := range gatedKinds {
		g.stores[k] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	}
}

// store is the gated kind's cache (empty while closed).
func (g *gate) store(kind string) cache.Indexer {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.stores[kind]
}

func (g *gate) isOpen() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.stop != nil
}

// poke asks a closed gate's loop to open now instead of at its next probe.
func (g *gate) poke() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// close stops the informers and empties the stores.
func (g *gate) close() {
	g.mu.Lock()
	stop := g.stop
	g.stop = nil
	g.ready.Store(false)
	g.setEmpty()
	g.mu.Unlock()
	if stop != nil {
		stop()
		g.done.Wait()
	}
}

// store returns kind's cache: a gated kind's from the gate, the others' from the term's
// shared informers.
func (c *Controller) store(kind string) cache.Indexer {
	if inf, ok := c.infs[kind]; ok {
		return inf.GetIndexer()
	}
	return c.gate.store(kind)
}

// lister returns kind's lister.
func (c *Controller) lister(kind string) cache.GenericLister {
	return cache.NewGenericLister(c.store(kind), kinds[kind].GroupResource())
}

// probe says whether the family has anything to do: a Vpc with spec.enableExternal (from the
// shared cache) or any NAT object (anyObject).
func (c *Controller) probe(ctx context.Context) (bool, error) {
	if c.externalVpc() {
		return true, nil
	}
	return c.anyObject(ctx)
}

// anyObject says whether the cluster has a NAT object: a list of one item per kind, the four
// at once. A kind whose CRD is missing has none.
func (c *Controller) anyObject(ctx context.Context) (bool, error) {
	found := make([]bool, len(gatedKinds))
	g, gctx := errgroup.WithContext(ctx)
	for i, k := range gatedKinds {
		g.Go(func() error {
			l, err := c.req.Dynamic.Resource(kinds[k]).List(gctx, metav1.ListOptions{Limit: 1})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("look for %s: %w", kinds[k].Resource, err)
			}
			found[i] = len(l.Items) > 0
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	return slices.Contains(found, true), nil
}

// externalVpc says whether a custom Vpc asks for the external link.
func (c *Controller) externalVpc() bool {
	objs, _ := c.lister("vpc").List(labels.Everything())
	for _, obj := range objs {
		if u, ok := obj.(*unstructured.Unstructured); ok && wantsExternal(u) {
			return true
		}
	}
	return false
}

func wantsExternal(u *unstructured.Unstructured) bool {
	on, _, _ := unstructured.NestedBool(u.Object, "spec", "enableExternal")
	return on
}

// unused says whether an open gate could close: no NAT object and no Vpc asking for the link.
func (c *Controller) unused() bool {
	for _, k := range gatedKinds {
		if len(c.store(k).ListKeys()) > 0 {
			return false
		}
	}
	return !c.externalVpc()
}

// open starts the gated informers under ctx, waits for their caches, swaps them in and
// queues every object of the family (the events of the initial lists were not queued).
func (c *Controller) open(ctx context.Context) error {
	g := c.gate
	if g.isOpen() {
		return nil
	}
	ictx, cancel := context.WithCancel(ctx)
	infs := map[string]cache.SharedIndexInformer{}
	var synced []cache.InformerSynced
	for _, k := range gatedKinds {
		inf := kubeapi.NewInformer(kubeapi.ListWatch[*unstructured.UnstructuredList](c.req.Dynamic.Resource(kinds[k]), nil), &unstructured.Unstructured{}, nil)
		on := func(obj any) {
			if g.ready.Load() {
				c.changed(k, obj)
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }, DeleteFunc: on,
		}); err != nil {
			cancel()
			return fmt.Errorf("watch %s: %w", kinds[k].Resource, err)
		}
		infs[k], synced = inf, append(synced, inf.HasSynced)
	}
	for _, inf := range infs {
		g.done.Add(1)
		go func() { defer g.done.Done(); inf.RunWithContext(ictx) }()
	}
	err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, s := range synced {
			if !s() {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		cancel()
		g.done.Wait()
		return fmt.Errorf("sync the ovn nat caches: %w", err)
	}
	g.mu.Lock()
	for k, inf := range infs {
		g.stores[k] = inf.GetIndexer()
	}
	g.stop = cancel
	g.ready.Store(true)
	g.mu.Unlock()
	c.log.Info("ovn nat informers started")
	for _, k := range append([]string{"vpc"}, gatedKinds...) {
		for _, key := range c.store(k).ListKeys() {
			c.queue.Add(k + "/" + key)
		}
	}
	return nil
}

// firstLook is a term's first anyObject, started by Probe as the term starts and read by Open.
type firstLook struct {
	done  chan struct{}
	found bool
	err   error
}

// Probe starts the term's first look for NAT objects in the background: the controller calls
// it as the term starts (after the Lease and the IPAM, before the topology and the caches),
// so the four lists run beside the term's other start work and Open only reads their answer.
// Every EIP an earlier term allocated has its object since before this term began, so these
// lists see it as surely as lists made just before the IPAM reconcile.
func (c *Controller) Probe(ctx context.Context) {
	l := &firstLook{done: make(chan struct{})}
	c.first = l
	go func() {
		defer close(l.done)
		l.found, l.err = c.anyObject(ctx)
	}()
}

// Open starts the family's informers and waits for their caches when the cluster has a NAT
// object (Probe's answer; looked for now when Probe was not called) or a Vpc asking for
// enableExternal (the shared cache, synced by now); the controller calls it after the term's
// caches synced and before the IPAM reconcile, which reads the EIPs (Claims).
func (c *Controller) Open(ctx context.Context) error {
	found, err := c.firstAnswer(ctx)
	if err != nil {
		return err
	}
	if !found && !c.externalVpc() {
		return nil
	}
	return c.open(ctx)
}

// firstAnswer is Probe's answer, waited for.
func (c *Controller) firstAnswer(ctx context.Context) (bool, error) {
	l := c.first
	if l == nil {
		return c.anyObject(ctx)
	}
	select {
	case <-l.done:
		return l.found, l.err
	case <-ctx.Done():
		return false, fmt.Errorf("look for ovn nat objects: %w", ctx.Err())
	}
}

// runGate opens a closed gate when a probe (every ProbeEvery) or a Vpc's event finds work,
// and closes an open one that has been unused for two probes in a row; it closes the gate
// when ctx ends.
func (c *Controller) runGate(ctx context.Context) {
	defer c.gate.close()
	t := time.NewTicker(c.req.ProbeEvery)
	defer t.Stop()
	idle := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-c.gate.wake:
		}
		if c.gate.isOpen() {
			if idle = idle + 1; !c.unused() {
				idle = 0
			}
			if idle >= 2 {
				c.gate.close()
				c.log.Info("ovn nat informers stopped: no NAT object and no Vpc with enableExternal")
				idle = 0
			}
			continue
		}
		found, err := c.probe(ctx)
		if err == nil && found {
			err = c.open(ctx)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			c.log.Warn("ovn nat: look for objects", "err", err)
		}
	}
}
