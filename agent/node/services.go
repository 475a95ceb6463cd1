package node

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
)

// kubeProxyRecheck is how often "auto" looks for kube-proxy's rules again: on a k3s host
// kube-proxy starts after edgeovn, and edgeovn hands the node ports over when it does.
const kubeProxyRecheck = 5 * time.Second

// serveServices serves NodePorts on this host's addresses while kube-proxy does not (host
// traffic to ClusterIPs needs no rule here: the route through ovn0 and the load balancers
// on the join switch serve it). With kube-proxy present, its rules serve both, and
// edgeovn's table is removed.
func (r *Role) serveServices(ctx context.Context, kube *kubeapi.Client) error {
	if !r.req.Services {
		return hostnet.EnsureServices(ctx, nil, r.log)
	}
	if r.req.KubeProxy == config.KubeProxyPresent {
		r.log.Info("kube-proxy serves host traffic to services and node ports (configured)")
		return hostnet.EnsureServices(ctx, nil, r.log)
	}
	factory := kubeapi.NewInformers(kube, kubeapi.InformerOptions{})
	svcs, slices := factory.Services(), factory.EndpointSlices()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for _, inf := range []cache.SharedIndexInformer{svcs.Informer(), slices.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: poke,
			UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke}); err != nil {
			return fmt.Errorf("watch services: %w", err)
		}
	}
	fctx, stop := context.WithCancel(ctx)
	factory.Start(fctx)
	defer factory.Shutdown()
	defer stop()
	if !cache.WaitForCacheSync(ctx.Done(), svcs.Informer().HasSynced, slices.Informer().HasSynced) {
		return nil
	}
	l := nodePortLoop{r: r, svcs: svcs.Lister().List, slices: func(svc *corev1.Service) []*discoveryv1.EndpointSlice {
		out, _ := slices.Lister().EndpointSlices(svc.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}))
		return out
	}}
	return l.run(ctx, changed)
}

type nodePortLoop struct {
	r      *Role
	svcs   func(labels.Selector) ([]*corev1.Service, error)
	slices func(*corev1.Service) []*discoveryv1.EndpointSlice
	mode   string // the kube-proxy mode last logged
}

func (l *nodePortLoop) run(ctx context.Context, changed <-chan struct{}) error {
	tick := time.NewTicker(kubeProxyRecheck)
	defer tick.Stop()
	for {
		if err := l.apply(ctx); err != nil {
			l.r.log.Warn("serve node ports, will retry", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
		}
	}
}

// apply detects who serves node ports and writes or removes edgeovn's rules.
func (l *nodePortLoop) apply(ctx context.Context) error {
	present := false
	if l.r.req.KubeProxy == config.KubeProxyAuto {
		var err error
		if present, err = kubeProxyPresent(); err != nil {
			return err
		}
	}
	mode := "edgeovn serves host traffic to services and node ports (kube-proxy not found)"
	switch {
	case l.r.req.KubeProxy == config.KubeProxyAbsent:
		mode = "edgeovn serves host traffic to services and node ports (kube-proxy absent: configured)"
	case present:
		mode = "kube-proxy serves host traffic to services and node ports (its rules found)"
	}
	if mode != l.mode {
		l.r.log.Info(mode)
		l.mode = mode
	}
	if present {
		return hostnet.EnsureServices(ctx, nil, l.r.log)
	}
	svcs, err := l.svcs(labels.Everything())
	if err != nil {
		return fmt.Errorf("list services: %w", err)
	}
	spec := &hostnet.ServiceSpec{Interface: HostInterface, NodePorts: nodePorts(l.r.req.NodeName, svcs, l.slices)}
	return hostnet.EnsureServices(ctx, spec, l.r.log)
}
