package controller

import (
	"context"
	"fmt"
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
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// ReasonPolicyUnsupported: part of a NetworkPolicy cannot be expressed in OVN; the Event
// says what and what edgeovn does instead.
const ReasonPolicyUnsupported = "PolicyUnsupported"

// hostsKey queues the nodes' join address set; no namespace has a colon in its name.
const hostsKey = ":hosts"

// policies turns NetworkPolicies into OVN port groups, address sets and ACLs (package
// netpol translates, this feature applies). Its unit of work is a namespace: all its
// policies and its default-deny port groups are synced together.
type policies struct {
	c          *Controller
	policies   networkinglisters.NetworkPolicyLister
	namespaces corelisters.NamespaceLister
	queue      workqueue.TypedRateLimitingInterface[string]
	// reported holds the problems last reported per policy, so a resync repeats no Event.
	reported sync.Map
	// writes counts the syncs' row writes; announced is the count the last nb_cfg bump covered.
	writes, announced atomic.Int64
}

var _ feature = (*policies)(nil)

func newPolicies(c *Controller) *policies {
	return &policies{c: c, queue: newQueue("networkpolicies")}
}

func (p *policies) name() string { return "network-policy" }

func (p *policies) register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	np, ns := f.NetworkPolicies(), f.Namespaces()
	pods, nodes := f.Pods().Informer(), f.Nodes().Informer()
	p.policies, p.namespaces = np.Lister(), ns.Lister()
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

func (p *policies) enqueuePolicy(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if np, ok := obj.(*networkingv1.NetworkPolicy); ok {
		p.queue.Add(np.Namespace)
	}
}

// enqueueAll queues every namespace with policies: a pod or namespace change may change
// what any of them selects, through namespace selectors.
func (p *policies) enqueueAll() {
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
		holdsNetwork(old) != holdsNetwork(cur) || !slices.EqualFunc(old.Spec.Containers, cur.Spec.Containers,
		func(a, b corev1.Container) bool { return slices.Equal(a.Ports, b.Ports) })
}

func nodeChanged(pair any) bool {
	old, cur := pair.([2]any)[0].(*corev1.Node), pair.([2]any)[1].(*corev1.Node)
	return old == nil || cur == nil || old.Annotations[annotation.IPAddress] != cur.Annotations[annotation.IPAddress]
}

func (p *policies) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	work(ctx, p.c, p.queue, "namespace", p.sync)
}

func (p *policies) sync(ctx context.Context, key string) error {
	if key == hostsKey {
		return p.syncHosts(ctx)
	}
	return p.syncNamespace(ctx, key)
}
