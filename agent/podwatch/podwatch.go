package podwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/cni/podnet"
	"github.com/edgeovn/edgeovn/cni/server"
)

// Watcher serves server.Pods from an informer on this node's pods.
type Watcher struct {
	log      *slog.Logger
	mtu      int
	informer cache.SharedIndexInformer

	mu      sync.Mutex
	changed map[string]chan struct{}
}

var _ server.Pods = (*Watcher)(nil)

// Request configures a Watcher.
type Request struct {
	// Pods lists and watches pods (all namespaces); the Watcher narrows it to NodeName's.
	Pods     kubeapi.ListWatcher[*corev1.PodList]
	NodeName string
	MTU      int
	Log      *slog.Logger
}

// New builds the informer; Run starts it.
func New(r Request) (*Watcher, error) {
	w := &Watcher{log: r.Log, mtu: r.MTU, changed: map[string]chan struct{}{}}
	lw := kubeapi.ListWatch(r.Pods, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", r.NodeName).String()
	})
	w.informer = kubeapi.NewInformer(lw, &corev1.Pod{}, slimPod)
	_, err := w.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.notify,
		UpdateFunc: func(_, obj any) { w.notify(obj) },
		DeleteFunc: w.notify,
	})
	if err != nil {
		return nil, fmt.Errorf("watch pods of node %s: %w", r.NodeName, err)
	}
	return w, nil
}

// Run runs the informer until ctx is done.
func (w *Watcher) Run(ctx context.Context) error {
	w.informer.RunWithContext(ctx)
	return nil
}

func (w *Watcher) notify(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	w.mu.Lock()
	if ch, ok := w.changed[key]; ok {
		close(ch)
		delete(w.changed, key)
	}
	w.mu.Unlock()
}

func (w *Watcher) changes(key string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.changed[key]
	if !ok {
		ch = make(chan struct{})
		w.changed[key] = ch
	}
	return ch
}

// WaitPodNetwork blocks until the pod k is annotated as allocated, or ctx ends.
func (w *Watcher) WaitPodNetwork(ctx context.Context, k server.PodKey) (server.PodNetwork, error) {
	key := k.Namespace + "/" + k.Name
	start := time.Now()
	for {
		ch := w.changes(key)
		n, err := w.lookup(key, k)
		if err == nil {
			w.log.Debug("pod network known", "pod", k.Name, "namespace", k.Namespace, "waited", time.Since(start))
			return n, nil
		}
		if !errors.Is(err, annotation.ErrNotAllocated) {
			return server.PodNetwork{}, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return server.PodNetwork{}, fmt.Errorf("wait for allocation of pod %s: %w", key, ctx.Err())
		}
	}
}

// lookup returns ErrNotAllocated (wrapped or not) for every state worth waiting past.
func (w *Watcher) lookup(key string, k server.PodKey) (server.PodNetwork, error) {
	uid := k.UID
	obj, exists, err := w.informer.GetStore().GetByKey(key)
	if err != nil || !exists {
		return server.PodNetwork{}, annotation.ErrNotAllocated
	}
	pod := obj.(*corev1.Pod)
	if uid != "" && string(pod.UID) != uid {
		return server.PodNetwork{}, annotation.ErrNotAllocated
	}
	keys := annotation.KeysFor(k.Provider)
	n, err := keys.Decode(pod.Annotations)
	if err != nil {
		if errors.Is(err, annotation.ErrNotAllocated) {
			if reason := pod.Annotations[annotation.NetworkErrorKey]; reason != "" {
				return server.PodNetwork{}, fmt.Errorf("pod %s: the controller cannot allocate its networks: %s", key, reason)
			}
			return server.PodNetwork{}, err
		}
		return server.PodNetwork{}, fmt.Errorf("pod %s: %w", key, err)
	}
	pn := server.PodNetwork{
		Switch:   n.Switch,
		Port:     annotation.AttachmentPortName(pod.Namespace, pod.Name, k.Provider),
		MAC:      n.MAC,
		IPs:      n.Prefixes(),
		Gateways: n.Gateways,
		MTU:      w.mtu,
	}
	if annotation.IsPrimary(k.Provider) {
		return pn, nil
	}
	// An attachment: no default route unless its default_route says so; its routes.
	pn.NoDefaultRoute = !keys.WantsDefaultRoute(pod.Annotations, false)
	routes, err := keys.ParseRoutes(pod.Annotations)
	if err != nil {
		return server.PodNetwork{}, fmt.Errorf("pod %s: %w", key, err)
	}
	for _, r := range routes {
		pn.Routes = append(pn.Routes, podnet.Route{Dst: r.Dst, GW: r.GW})
	}
	return pn, nil
}

// slimPod is the informer's transform: of each pod the cache keeps only what lookup reads
// (its name, namespace, uid and annotations), what the BGP announcement reads (its deletion
// timestamp, hostNetwork and phase: agent/bgp's podOf) and the resourceVersion the informer
// compares. The rest of the spec and status (containers, volumes, tolerations, conditions:
// most of a pod) and the managedFields never enter the node's cache, which holds every pod
// of the node.
func slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, Annotations: p.Annotations, DeletionTimestamp: p.DeletionTimestamp},
		Spec:   corev1.PodSpec{HostNetwork: p.Spec.HostNetwork},
		Status: corev1.PodStatus{Phase: p.Status.Phase}}, nil
}

// Pod returns the cached pod (slimmed: see slimPod).
func (w *Watcher) Pod(namespace, name string) (*corev1.Pod, bool) {
	obj, ok, err := w.informer.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, false
	}
	return obj.(*corev1.Pod), true
}

// List returns this node's pods as the cache has them (slimPod: name, namespace, uid,
// annotations, deletion timestamp, hostNetwork and phase only); callers must not change them.
func (w *Watcher) List() []*corev1.Pod {
	objs := w.informer.GetStore().List()
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out
}

// HasSynced reports whether the informer has listed the node's pods once.
func (w *Watcher) HasSynced() bool { return w.informer.HasSynced() }

// OnChange calls f with the namespace and name of each pod added, updated or deleted
// (including those already cached when it is called), from the informer's goroutine: f must
// not block.
func (w *Watcher) OnChange(f func(namespace, name string)) error {
	_, err := w.informer.AddEventHandler(changeHandler(f))
	return err
}

// OnChangeUntil is OnChange until ctx ends: then f is removed (a consumer that comes and
// goes, as the BGP speaker at a reload, leaves no handler behind).
func (w *Watcher) OnChangeUntil(ctx context.Context, f func(namespace, name string)) error {
	reg, err := w.informer.AddEventHandler(changeHandler(f))
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, func() { _ = w.informer.RemoveEventHandler(reg) })
	return nil
}

func changeHandler(f func(namespace, name string)) cache.ResourceEventHandler {
	call := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			if ns, name, err := cache.SplitMetaNamespaceKey(key); err == nil {
				f(ns, name)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: call, UpdateFunc: func(_, obj any) { call(obj) }, DeleteFunc: call,
	}
}
