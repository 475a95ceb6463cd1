package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// Reporter receives the speaker's state for metrics and `edgeovn status`: each peer's
// session (up: established), the count of announced prefixes and the status's text.
type Reporter interface {
	SetBGP(up map[string]bool, prefixes int, status string)
}

// Request is what Run needs.
type Request struct {
	config.BGP
	NodeName string
	Kube     *kubeapi.Client
	// Pods is the node role's watch of this host's pods, shared.
	Pods Pods
	// Subnets is the node role's running kubeovn.io/v1 Subnet informer, shared; nil: no
	// Subnet is announced.
	Subnets cache.SharedIndexInformer
	// Report gets the state at each change; nil: none.
	Report Reporter
	// Speaker is the path of the speaker process's binary (edgeovn-bgp).
	Speaker string
	// HostIPv4 is this host's own IPv4 address (the node role's tunnel endpoint), the router
	// ID when none is set and no IPv4 neighbour gives one (an IPv6-only site), as Kube-OVN's
	// speaker takes the node's IPv4 address; nil: none.
	HostIPv4 func(context.Context) (netip.Addr, error)
	Log      *slog.Logger
}

// Pods is what the announcement reads of the node role's pod watch (podwatch.Watcher): this
// host's pods, whose cache keeps what podOf reads.
type Pods interface {
	List() []*corev1.Pod
	Pod(namespace, name string) (*corev1.Pod, bool)
	HasSynced() bool
	// OnChangeUntil calls f at each pod's change, from the informer's goroutine, until ctx
	// ends.
	OnChangeUntil(ctx context.Context, f func(namespace, name string)) error
}

// Run speaks BGP for this host until ctx ends: it watches what it announces from (Subnets,
// this host's pods, Services with announce-cluster-ip), and, once they have listed, runs the
// speaker process and keeps its announcement equal to Announcements of what it sees. It is
// only called with a neighbour configured.
func Run(ctx context.Context, req Request) error {
	w := newWatch(req)
	if err := w.start(ctx); err != nil {
		return err
	}
	wants := make(chan []netip.Prefix, 1)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-w.changed:
				if want, ok := w.want(); ok {
					latest(wants, want)
				}
			}
		}
	}()
	return supervise(ctx, req, wants)
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// latest puts v in ch (capacity 1) in place of what is there.
func latest[T any](ch chan T, v T) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// routerID is the configured one, else this host's IPv4 source toward the first IPv4
// neighbour that has a route, else this host's own IPv4 address (hostIPv4).
func routerID(ctx context.Context, b config.BGP, hostIPv4 func(context.Context) (netip.Addr, error)) (netip.Addr, error) {
	if b.RouterID.IsValid() {
		return b.RouterID, nil
	}
	for _, n := range b.NeighborAddresses {
		routes, err := netlink.RouteGet(net.IP(n.AsSlice()))
		if err != nil || len(routes) == 0 {
			continue
		}
		if src, ok := netip.AddrFromSlice(routes[0].Src); ok && src.Unmap().Is4() {
			return src.Unmap(), nil
		}
	}
	why := "no host IPv4 address known"
	if hostIPv4 != nil {
		a, err := hostIPv4(ctx)
		if err == nil && a.Is4() && !a.IsUnspecified() {
			return a, nil
		}
		why = fmt.Sprintf("host IPv4 address: %v", err)
		if err == nil {
			why = fmt.Sprintf("host address %s is not IPv4", a)
		}
	}
	return netip.Addr{}, fmt.Errorf("bgp router-id: none set, no IPv4 source address toward %v and %s: set router-id", b.Neighbors(), why)
}

// watch is the informers the announcement is made from: the node role's Subnets and pods
// (shared), and its own Services.
type watch struct {
	req      Request
	subnets  cache.SharedIndexInformer // nil without a dynamic client
	services cache.SharedIndexInformer // nil without announce-cluster-ip
	changed  chan struct{}
	events   *badValues
}

func newWatch(req Request) *watch {
	return &watch{req: req, changed: make(chan struct{}, 1)}
}

func (w *watch) start(ctx context.Context) error {
	on := func(any) { poke(w.changed) }
	handler := cache.ResourceEventHandlerFuncs{AddFunc: on, UpdateFunc: func(_, o any) { on(o) }, DeleteFunc: on}
	if err := w.req.Pods.OnChangeUntil(ctx, func(string, string) { poke(w.changed) }); err != nil {
		return fmt.Errorf("bgp: watch pods: %w", err)
	}
	w.subnets = w.req.Subnets
	if w.subnets != nil {
		reg, err := w.subnets.AddEventHandler(handler)
		if err != nil {
			return fmt.Errorf("bgp: watch subnets: %w", err)
		}
		context.AfterFunc(ctx, func() { _ = w.subnets.RemoveEventHandler(reg) })
	}
	if w.req.AnnounceClusterIP {
		w.services = kubeapi.NewInformer(kubeapi.ListWatch(w.req.Kube.Services(""), nil), &corev1.Service{}, nil)
		if _, err := w.services.AddEventHandler(handler); err != nil {
			return fmt.Errorf("bgp: watch services: %w", err)
		}
		go w.services.RunWithContext(ctx)
	}
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), w.synced()...) {
			poke(w.changed)
		}
	}()
	w.events = newBadValues(ctx, w.req.Kube, w.req.NodeName, w.req.Log)
	return nil
}

// synced are the sources' HasSynced.
func (w *watch) synced() []cache.InformerSynced {
	out := []cache.InformerSynced{w.req.Pods.HasSynced}
	for _, inf := range []cache.SharedIndexInformer{w.subnets, w.services} {
		if inf != nil {
			out = append(out, inf.HasSynced)
		}
	}
	return out
}

// want is what the informers say to announce, once all have listed (before, a partial list
// would withdraw what is still wanted; start's wait pokes once all have).
func (w *watch) want() ([]netip.Prefix, bool) {
	for _, synced := range w.synced() {
		if !synced() {
			return nil, false
		}
	}
	want, bad := Announcements(w.state())
	w.events.report(bad, w.objects())
	return want, true
}
