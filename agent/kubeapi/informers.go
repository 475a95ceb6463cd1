package kubeapi

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
)

// InformerOptions shape every informer of an Informers.
type InformerOptions struct {
	// Transform trims each object before it is cached (nil: kept whole).
	Transform cache.TransformFunc
	// Tweak narrows every list and watch (a field selector; nil: everything).
	Tweak func(*metav1.ListOptions)
}

// Informers makes the shared informers of one client, one per resource, and runs them.
type Informers struct {
	client *Client
	opts   InformerOptions

	mu      sync.Mutex
	made    map[string]cache.SharedIndexInformer
	started map[string]bool
	running sync.WaitGroup
}

// NewInformers returns an empty set of informers of c.
func NewInformers(c *Client, opts InformerOptions) *Informers {
	return &Informers{client: c, opts: opts, made: map[string]cache.SharedIndexInformer{}, started: map[string]bool{}}
}

// Informer is a shared informer and the typed lister of its cache.
type Informer[L any] struct {
	informer cache.SharedIndexInformer
	lister   L
}

// Informer returns the shared informer.
func (i Informer[L]) Informer() cache.SharedIndexInformer { return i.informer }

// Lister returns the lister of its cache.
func (i Informer[L]) Lister() L { return i.lister }

// ListWatcher is a typed client's list and watch (edgeovn's, or client-go's in tests).
type ListWatcher[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// ListWatch adapts a typed client's list and watch to an informer's, tweak narrowing both; its
// watch streams are re-opened where the API server closed them early (Rewatch).
func ListWatch[L runtime.Object](c ListWatcher[L], tweak func(*metav1.ListOptions)) *cache.ListWatch {
	narrow := func(o *metav1.ListOptions) {
		if tweak != nil {
			tweak(o)
		}
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			narrow(&o)
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			narrow(&o)
			return Rewatch(ctx, o, c.Watch)
		},
	}
}

// NewInformer is a shared informer over lw (no resync) whose cache is indexed by namespace, as
// the typed listers need, and trimmed by transform before anything enters it (nil: objects
// are kept whole).
func NewInformer(lw cache.ListerWatcher, example runtime.Object, transform cache.TransformFunc) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if transform != nil {
		_ = inf.SetTransform(transform) // cannot fail before the informer runs
	}
	return inf
}

// informerFor returns the resource's informer, made on first use.
func informerFor[L runtime.Object](f *Informers, resource string, example runtime.Object, c ListWatcher[L]) cache.SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.made[resource]; ok {
		return inf
	}
	inf := NewInformer(ListWatch(c, f.opts.Tweak), example, f.opts.Transform)
	f.made[resource] = inf
	return inf
}

// Start runs every informer made and not running yet, until ctx ends.
func (f *Informers) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for resource, inf := range f.made {
		if f.started[resource] {
			continue
		}
		f.started[resource] = true
		f.running.Go(func() { inf.RunWithContext(ctx) })
	}
}

// Shutdown waits until every started informer has stopped; their context must end first.
func (f *Informers) Shutdown() { f.running.Wait() }

// Pods is the informer of the pods.
func (f *Informers) Pods() Informer[corelisters.PodLister] {
	inf := informerFor(f, "pods", &corev1.Pod{}, f.client.Pods(""))
	return Informer[corelisters.PodLister]{inf, corelisters.NewPodLister(inf.GetIndexer())}
}

// Nodes is the informer of the nodes.
func (f *Informers) Nodes() Informer[corelisters.NodeLister] {
	inf := informerFor(f, "nodes", &corev1.Node{}, f.client.Nodes())
	return Informer[corelisters.NodeLister]{inf, corelisters.NewNodeLister(inf.GetIndexer())}
}

// Namespaces is the informer of the namespaces.
func (f *Informers) Namespaces() Informer[corelisters.NamespaceLister] {
	inf := informerFor(f, "namespaces", &corev1.Namespace{}, f.client.Namespaces())
	return Informer[corelisters.NamespaceLister]{inf, corelisters.NewNamespaceLister(inf.GetIndexer())}
}

// Services is the informer of the Services.
func (f *Informers) Services() Informer[corelisters.ServiceLister] {
	inf := informerFor(f, "services", &corev1.Service{}, f.client.Services(""))
	return Informer[corelisters.ServiceLister]{inf, corelisters.NewServiceLister(inf.GetIndexer())}
}

// EndpointSlices is the informer of the EndpointSlices.
func (f *Informers) EndpointSlices() Informer[discoverylisters.EndpointSliceLister] {
	inf := informerFor(f, "endpointslices", &discoveryv1.EndpointSlice{}, f.client.EndpointSlices(""))
	return Informer[discoverylisters.EndpointSliceLister]{inf, discoverylisters.NewEndpointSliceLister(inf.GetIndexer())}
}

// NetworkPolicies is the informer of the NetworkPolicies.
func (f *Informers) NetworkPolicies() Informer[networkinglisters.NetworkPolicyLister] {
	inf := informerFor(f, "networkpolicies", &networkingv1.NetworkPolicy{}, f.client.NetworkPolicies(""))
	return Informer[networkinglisters.NetworkPolicyLister]{inf, networkinglisters.NewNetworkPolicyLister(inf.GetIndexer())}
}

// StatefulSets is the informer of the StatefulSets.
func (f *Informers) StatefulSets() Informer[appslisters.StatefulSetLister] {
	inf := informerFor(f, "statefulsets", &appsv1.StatefulSet{}, f.client.StatefulSets(""))
	return Informer[appslisters.StatefulSetLister]{inf, appslisters.NewStatefulSetLister(inf.GetIndexer())}
}
