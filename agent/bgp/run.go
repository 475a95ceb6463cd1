package bgp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

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
// session (up: established), the count of announced prefixes and Status's text.
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
	// ListenPort: see SpeakerRequest (0: 179).
	ListenPort int32
	Log        *slog.Logger
}

// Run speaks BGP for this host until ctx ends: it starts the speaker, watches what it
// announces from (Subnets, this host's pods, Services with announce-cluster-ip) and keeps
// the announcement equal to Announcements of what it sees. It is only called with a
// neighbour configured.
func Run(ctx context.Context, req Request) error {
	id, err := routerID(req.BGP)
	if err != nil {
		return err
	}
	sp, err := StartSpeaker(ctx, SpeakerRequest{BGP: req.BGP, RouterID: id, ListenPort: req.ListenPort, Log: req.Log})
	if err != nil {
		return err
	}
	req.Log.Info("bgp speaker started", "router_id", id.String(), "as", req.ClusterAS, "neighbors", fmt.Sprint(req.Neighbors()),
		"neighbor_as", req.NeighborAS, "graceful_restart", req.GracefulRestart)
	w := newWatch(req)
	if err := w.start(ctx); err != nil {
		sp.Stop(false)
		return err
	}
	peerEvents := make(chan struct{}, 1)
	go func() {
		_ = sp.srv.WatchEvent(ctx, watchPeers(), func(*apiWatchResponse) { poke(peerEvents) })
	}()
	d := newDiagnosis(req.AuthPassword != "")
	tick := time.NewTicker(statusEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			sp.Stop(true)
			return nil
		case <-w.changed:
			w.apply(ctx, sp)
		case <-peerEvents:
		case <-tick.C:
		}
		if req.Report != nil {
			st := sp.Status(ctx, d)
			req.Report.SetBGP(st.Up(), len(st.Announced), st.String())
		}
	}
}

// statusEvery refreshes the status (peer states, why a session is down) besides the peers'
// events.
var statusEvery = 5 * time.Second

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
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

// apply announces what the informers say, once all have listed (before, a partial list
// would withdraw what is still wanted).
func (w *watch) apply(ctx context.Context, sp *Speaker) {
	for _, inf := range w.informers() {
		if !inf.HasSynced() {
			return // start's wait pokes once all have
		}
	}
	state := w.state()
	want, bad := Announcements(state)
	w.events.report(bad, w.objects())
	if err := sp.Set(ctx, want); err != nil {
		w.req.Log.Warn("bgp announcement incomplete, retried at the next change", "err", err)
		time.AfterFunc(time.Second, func() { poke(w.changed) })
	}
}
