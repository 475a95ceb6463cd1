package policies

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// ReasonPolicyUnsupported: part of a NetworkPolicy cannot be expressed in OVN; the Event
// says what and what edgeovn does instead.
const ReasonPolicyUnsupported = "PolicyUnsupported"

// hostsKey queues the nodes' join address set; no namespace has a colon in its name.
const hostsKey = ":hosts"

// Request is what the policies share with the rest of the controller role.
type Request struct {
	NB *northbound.Client
	// Events reports on a policy what OVN cannot express.
	Events record.EventRecorder
	Log    *slog.Logger
	// Metrics counts the syncs; nil: none.
	Metrics *metrics.Metrics
	// IPv6 says the cluster CIDR is IPv6 (netpol.Cluster).
	IPv6 bool
	// Lost says the pod ("namespace/name") lost its annotated address to an older claim: it
	// has no port, so no policy selects it.
	Lost func(key string) bool
}

// Controller turns NetworkPolicies into OVN port groups, address sets and ACLs (package
// netpol translates, this feature applies). Its unit of work is a namespace: all its
// policies and its default-deny port groups are synced together.
type Controller struct {
	req        Request
	policies   networkinglisters.NetworkPolicyLister
	namespaces corelisters.NamespaceLister
	pods       corelisters.PodLister
	nodes      corelisters.NodeLister
	queue      workqueue.TypedRateLimitingInterface[string]
	// reported holds the problems last reported per policy, so a resync repeats no Event.
	reported sync.Map
	// writes counts the syncs' row writes; announced is the count the last nb_cfg bump covered.
	writes, announced atomic.Int64
}

// New is the network-policy feature of one term; the controller registers, reconciles and
// runs it.
func New(req Request) *Controller {
	return &Controller{req: req, queue: queue.New("networkpolicies")}
}

// Name is the feature's name in logs.
func (p *Controller) Name() string { return "network-policy" }

// Register adds the NetworkPolicy, Namespace, Pod and Node handlers to the term's informers.
func (p *Controller) Register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	np, ns := f.NetworkPolicies(), f.Namespaces()
	pods, nodes := f.Pods().Informer(), f.Nodes().Informer()
	p.policies, p.namespaces = np.Lister(), ns.Lister()
	p.pods, p.nodes = f.Pods().Lister(), f.Nodes().Lister()
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{np.Informer(), onChange(func(any) bool { return true }, p.enqueuePolicy)},
		{ns.Informer(), onChange(namespaceChanged, func(any) { p.enqueueAll() })},
		{pods, onChange(podChanged, func(any) { p.enqueueAll() })},
		{nodes, onChange(nodeChanged, func(any) { p.queue.Add(hostsKey) })},
	}
	for _, h := range handlers {
		if _, err := h.inf.AddEventHandler(h.h); err != nil {
			return nil, fmt.Errorf("watch for network policies: %w", err)
		}
	}
	return []cache.InformerSynced{np.Informer().HasSynced, ns.Informer().HasSynced}, nil
}

// onChange calls do on adds and deletes, and on updates that changed reports true for.
func onChange(changed func(pair any) bool, do func(obj any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: do,
		UpdateFunc: func(old, obj any) {
			if changed([2]any{old, obj}) {
				do(obj)
			}
		},
		DeleteFunc: do,
	}
}

func (p *Controller) enqueuePolicy(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if np, ok := obj.(*networkingv1.NetworkPolicy); ok {
		p.queue.Add(np.Namespace)
	}
}

// enqueueAll queues every namespace with policies: a pod or namespace change may change
// what any of them selects, through namespace selectors.
func (p *Controller) enqueueAll() {
	all, err := p.policies.List(labels.Everything())
	if err != nil {
		return
	}
	for _, np := range all {
		p.queue.Add(np.Namespace)
	}
}

func namespaceChanged(pair any) bool {
	old, cur := pair.([2]any)[0].(*corev1.Namespace), pair.([2]any)[1].(*corev1.Namespace)
	return old == nil || cur == nil || !maps.Equal(old.Labels, cur.Labels)
}

// podChanged reports what a translation reads: labels, address, ports, phase.
func podChanged(pair any) bool {
	old, cur := pair.([2]any)[0].(*corev1.Pod), pair.([2]any)[1].(*corev1.Pod)
	if old == nil || cur == nil {
		return true
	}
	return !maps.Equal(old.Labels, cur.Labels) || old.Annotations[annotation.IPAddress] != cur.Annotations[annotation.IPAddress] ||
		old.Annotations[annotation.Allocated] != cur.Annotations[annotation.Allocated] ||
		podnet.HoldsNetwork(old) != podnet.HoldsNetwork(cur) || !slices.EqualFunc(old.Spec.Containers, cur.Spec.Containers,
		func(a, b corev1.Container) bool { return slices.Equal(a.Ports, b.Ports) })
}

func nodeChanged(pair any) bool {
	old, cur := pair.([2]any)[0].(*corev1.Node), pair.([2]any)[1].(*corev1.Node)
	return old == nil || cur == nil || old.Annotations[annotation.IPAddress] != cur.Annotations[annotation.IPAddress]
}

// Run syncs the queued namespaces (and the hosts' set) until ctx ends.
func (p *Controller) Run(ctx context.Context) {
	queue.Run(ctx, p.queue, queue.Worker{Kind: "namespace", Sync: p.sync, Log: p.req.Log, Metrics: p.req.Metrics})
}

func (p *Controller) sync(ctx context.Context, key string) error {
	if key == hostsKey {
		return p.syncHosts(ctx)
	}
	return p.syncNamespace(ctx, key)
}
