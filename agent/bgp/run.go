package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
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
	// Dynamic reads kubeovn.io/v1 Subnets; nil: no Subnet is announced.
	Dynamic dynamic.Interface
	// Report gets the state at each change; nil: none.
	Report Reporter
	// Speaker is the path of the speaker process's binary (edgeovn-bgp).
	Speaker string
	Log     *slog.Logger
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
// neighbour.
func routerID(b config.BGP) (netip.Addr, error) {
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
	return netip.Addr{}, fmt.Errorf("bgp router-id: none set and no IPv4 source address toward %v: set router-id", b.Neighbors())
}

// watch is the informers the announcement is made from.
type watch struct {
	req      Request
	subnets  cache.SharedIndexInformer // nil without a dynamic client
	pods     cache.SharedIndexInformer
	services cache.SharedIndexInformer // nil without announce-cluster-ip
	changed  chan struct{}
	events   *badValues
}

func newWatch(req Request) *watch {
	return &watch{req: req, changed: make(chan struct{}, 1)}
}

func (w *watch) start(ctx context.Context) error {
	node := w.req.NodeName
	w.pods = kubeapi.NewInformer(kubeapi.ListWatch(w.req.Kube.Pods(""), func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
	}), &corev1.Pod{}, nil)
	infs := []cache.SharedIndexInformer{w.pods}
	if w.req.Dynamic != nil {
		w.subnets = kubeapi.DynamicInformer(w.req.Dynamic, kubeovn.SubnetResource).Informer()
		infs = append(infs, w.subnets)
	}
	if w.req.AnnounceClusterIP {
		w.services = kubeapi.NewInformer(kubeapi.ListWatch(w.req.Kube.Services(""), nil), &corev1.Service{}, nil)
		infs = append(infs, w.services)
	}
	on := func(any) { poke(w.changed) }
	for _, inf := range infs {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: on,
			UpdateFunc: func(_, o any) { on(o) }, DeleteFunc: on}); err != nil {
			return fmt.Errorf("bgp: watch: %w", err)
		}
		go inf.RunWithContext(ctx)
	}
	go func() {
		synced := make([]cache.InformerSynced, len(infs))
		for i, inf := range infs {
			synced[i] = inf.HasSynced
		}
		if cache.WaitForCacheSync(ctx.Done(), synced...) {
			poke(w.changed)
		}
	}()
	w.events = newBadValues(ctx, w.req.Kube, node, w.req.Log)
	return nil
}

// informers are the running informers.
func (w *watch) informers() []cache.SharedIndexInformer {
	var out []cache.SharedIndexInformer
	for _, inf := range []cache.SharedIndexInformer{w.pods, w.subnets, w.services} {
		if inf != nil {
			out = append(out, inf)
		}
	}
	return out
}

// want is what the informers say to announce, once all have listed (before, a partial list
// would withdraw what is still wanted; start's wait pokes once all have).
func (w *watch) want() ([]netip.Prefix, bool) {
	for _, inf := range w.informers() {
		if !inf.HasSynced() {
			return nil, false
		}
	}
	want, bad := Announcements(w.state())
	w.events.report(bad, w.objects())
	return want, true
}
