package node

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
	"github.com/vishvananda/netlink"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
	"github.com/edgeovn/edgeovn/agent/node/svchealth"
)

// kubeProxyRecheck is how often "auto" looks for kube-proxy's rules again: on a k3s host
// kube-proxy starts after edgeovn, and edgeovn hands the node ports over when it does.
const kubeProxyRecheck = 5 * time.Second

// serveServices serves NodePorts on this host's addresses, external and LoadBalancer IPs
// arriving on any interface, and the Local LoadBalancers' health checks while kube-proxy
// does not (host
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
	events, stopEvents := newNodeRecorder(ctx, kube, r.req.NodeName)
	defer stopEvents()
	hc := svchealth.New("", r.log.With("feature", "health-checks"))
	defer hc.Close()
	l := nodePortLoop{r: r, svcs: svcs.Lister().List, slices: func(svc *corev1.Service) []*discoveryv1.EndpointSlice {
		out, _ := slices.Lister().EndpointSlices(svc.Namespace).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}))
		return out
	}, health: hc, refusals: newRefusals(events, r.log)}
	return l.run(ctx, changed)
}

type nodePortLoop struct {
	r      *Role
	svcs   func(labels.Selector) ([]*corev1.Service, error)
	slices func(*corev1.Service) []*discoveryv1.EndpointSlice
	mode   string // the kube-proxy mode last logged
	// health answers the healthCheckNodePorts while edgeovn serves the Services.
	health *svchealth.Server
	// refusals reports the external and LoadBalancer IPs refused, once each.
	refusals *refusals
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
		_ = l.health.Sync(nil, false)
		return hostnet.EnsureServices(ctx, nil, l.r.log)
	}
	svcs, err := l.svcs(labels.Everything())
	if err != nil {
		return fmt.Errorf("list services: %w", err)
	}
	guard, err := l.guard()
	if err != nil {
		return err
	}
	ips, refused := serviceIPs(serviceIPsRequest{Node: l.r.req.NodeName, Services: svcs, Slices: l.slices, Refuse: guard.refuse})
	l.refusals.report(refused)
	ips = append(ips, hostClusterIPs(svcs, l.slices, guard.hostAddrs)...)
	spec := &hostnet.ServiceSpec{Interface: HostInterface, NodePorts: nodePorts(l.r.req.NodeName, svcs, l.slices, guard.hostAddrs), ServiceIPs: ips}
	werr := hostnet.EnsureServices(ctx, spec, l.r.log)
	if err := l.health.Sync(healthChecks(l.r.req.NodeName, svcs, l.slices), werr == nil); err != nil {
		l.r.log.Warn("serve health checks, will retry", "err", err)
	}
	return werr
}

// guard is the check of external and LoadBalancer IPs against the cluster's networks and
// the host's own addresses and listeners, read now.
func (l *nodePortLoop) guard() (ipGuard, error) {
	c := l.r.req.Cluster
	var g ipGuard
	for _, p := range c.ClusterCIDRs() {
		g.reserved = append(g.reserved, namedPrefix{"pod network (cluster-cidr)", p})
	}
	for _, p := range c.ServiceCIDRs {
		g.reserved = append(g.reserved, namedPrefix{"service network (service-cidr)", p})
	}
	// The join network and every Subnet are routed through ovn0 (hostwire).
	if link, err := netlinksafe.LinkByName(HostInterface); err == nil {
		routes, err := netlinksafe.RouteList(link, netlink.FAMILY_ALL)
		if err != nil {
			return g, fmt.Errorf("list the routes through %s: %w", HostInterface, err)
		}
		for _, rt := range routes {
			if p, ok := prefixOf(rt.Dst); ok && p.Bits() > 0 {
				g.reserved = append(g.reserved, namedPrefix{"pod or join network routed through " + HostInterface, p})
			}
		}
	}
	addrs, err := netlinksafe.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil {
		return g, fmt.Errorf("list the host's addresses: %w", err)
	}
	g.hostAddrs = map[netip.Addr]bool{}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			g.hostAddrs[ip.Unmap()] = true
		}
	}
	g.readListening = hostListeners
	return g, nil
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := netip.AddrFromSlice(n.IP)
	if a.Is4In6() && len(n.Mask) == net.IPv4len {
		a = a.Unmap()
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(a, ones).Masked(), ok
}
