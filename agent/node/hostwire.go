package node

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/node/hostnet"
)

// HostInterface is the host's port into OVN, as in Kube-OVN.
const HostInterface = "ovn0"

// errNoJoinPort: the controller has not given this node its join port yet.
var errNoJoinPort = errors.New("node has no join port yet")

// wireHost keeps the host wired to the cluster network as the controller describes it in this
// Node's annotations (its join address and port): ovn0 on br-int, the route to the pods, and
// masquerading of pod traffic leaving the host. It never holds up readiness: pods on this node
// reach each other without it, the host and the outside need it. It re-applies on every
// change of the Node and of the host's addresses (whose networks it publishes) and retries a
// failure with backoff; between changes the drift loop (keepWired) re-applies the last spec.
func (r *Role) wireHost(ctx context.Context, kube *kubeapi.Client) error {
	factory := kubeapi.NewInformers(kube, kubeapi.InformerOptions{Tweak: func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", r.req.NodeName).String()
	}})
	nodes := factory.Nodes()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, obj any) { poke(obj) }, DeleteFunc: poke,
	}); err != nil {
		return fmt.Errorf("watch node %s: %w", r.req.NodeName, err)
	}
	subnets, err := r.watchSubnets(ctx, poke)
	if err != nil {
		return err
	}
	r.subnets.Store(subnets)
	r.subnetsOnce.Do(func() { close(r.subnetsSet) })
	fctx, stop := context.WithCancel(ctx)
	// The host's addresses too: the networks this host publishes (edgeovn.io/host-networks,
	// what the controller checks Subnets against) follow an address added or removed after the
	// start, not only the Node's changes.
	defer r.events.watch(&hostWatch{kinds: addrEvents, poke: func() { poke(nil) }})()
	factory.Start(fctx)
	defer factory.Shutdown()
	defer stop()
	backoff := time.Duration(0)
	var applied string
	seen := false // the Node has existed: its absence now means it was deleted
	for {
		var retry <-chan time.Time // nil, never ready, unless a failure is waiting for its retry
		if backoff > 0 {
			retry = time.After(backoff)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-retry:
		}
		node, err := nodes.Lister().Get(r.req.NodeName)
		if apierrors.IsNotFound(err) && seen {
			if err := r.unwireHost(ctx, r.log); err != nil {
				backoff = min(max(2*backoff, 200*time.Millisecond), 30*time.Second)
				r.log.Warn("unwire host, will retry", "node", r.req.NodeName, "err", err, "retry_in", backoff)
				continue
			}
			backoff, applied = 0, ""
			continue
		}
		if err != nil {
			continue // not registered yet: its add event wakes us
		}
		seen = true
		r.ready.nodeGone.Store(false)
		r.followNodeIP(ctx, node)
		networks, err := hostnet.HostNetworks(HostInterface)
		if err != nil {
			r.log.Warn("list this host's networks", "err", err)
		}
		spec, refused, err := r.hostSpec(node, subnets, networks)
		if errors.Is(err, errNoJoinPort) {
			r.publish(ctx, kube, node, networks)
			continue
		}
		if err == nil {
			r.host.mu.Lock()
			r.host.conflicts.refused = refused
			r.host.mu.Unlock()
			log := r.log
			if fmt.Sprint(spec) == applied {
				// Applied before, unchanged: whatever this writes repairs drift, whichever
				// loop (this one on a Node event, or the drift check) comes first.
				log = log.With("cause", "drift")
			}
			err = r.ensureHost(ctx, spec, log)
		}
		r.publish(ctx, kube, node, networks)
		if err != nil {
			backoff = min(max(2*backoff, 200*time.Millisecond), 30*time.Second)
			r.log.Warn("wire host to the cluster network, will retry", "node", r.req.NodeName, "err", err, "retry_in", backoff)
			continue
		}
		backoff = 0
		if s := fmt.Sprint(spec); s != applied {
			applied = s
			attrs := []any{"interface", spec.Interface}
			if spec.Address.IsValid() { // a host of one family logs no "invalid Prefix" for the other
				attrs = append(attrs, "ip", spec.Address.String(), "gateway", spec.Gateway.String())
			}
			if spec.Address6.IsValid() {
				attrs = append(attrs, "ip6", spec.Address6.String(), "gateway6", spec.Gateway6.String())
			}
			r.log.Info("host wired to the cluster network", append(attrs, "routes", fmt.Sprint(spec.Routes))...)
		}
	}
}

// publish writes this host's networks and conflicts on its Node; a failure is retried at
// the next change of the Node or of the host's addresses (hostEvents).
func (r *Role) publish(ctx context.Context, kube *kubeapi.Client, node *corev1.Node, networks []netip.Prefix) {
	if networks == nil {
		return
	}
	if err := r.publishHost(ctx, kube, node, networks); err != nil {
		r.log.Warn("publish this host's networks on its Node, will retry", "err", err)
	}
}

// hostSpec is the host wiring the Node's annotations describe, with the subnets' routes and
// masquerade, without the subnets that overlap this host's networks (refused).
func (r *Role) hostSpec(node *corev1.Node, subnets *subnetView, networks []netip.Prefix) (hostnet.Spec, []hostnet.RouteConflict, error) {
	n, err := annotation.Decode(node.Annotations)
	if errors.Is(err, annotation.ErrNotAllocated) {
		return hostnet.Spec{}, nil, errNoJoinPort
	}
	if err != nil {
		return hostnet.Spec{}, nil, fmt.Errorf("node %s annotations: %w", node.Name, err)
	}
	spec := hostnet.Spec{Bridge: Bridge, Interface: HostInterface, MAC: n.MAC, MTU: r.req.MTU}
	var joins []netip.Prefix
	for _, p := range n.Prefixes() {
		gw := gatewayOf(p, n.Gateways)
		switch {
		case !gw.IsValid():
			continue // a join address without its family's gateway is not wired
		case p.Addr().Is4() && !spec.Address.IsValid():
			spec.Address, spec.Gateway = p, gw
		case p.Addr().Is6() && !spec.Address6.IsValid():
			spec.Address6, spec.Gateway6 = p, gw
		default:
			continue
		}
		joins = append(joins, p.Masked())
	}
	if len(joins) == 0 {
		return hostnet.Spec{}, nil, fmt.Errorf("node %s annotations: want a join address and its family's gateway, have %v via %v", node.Name, n.IPs, n.Gateways)
	}
	if spec.IfaceID = node.Annotations[annotation.PortNameKey]; spec.IfaceID == "" {
		return hostnet.Spec{}, nil, fmt.Errorf("node %s annotations: %s is empty", node.Name, annotation.PortNameKey)
	}
	routes, masq := subnets.wiring(r.req.ClusterCIDRs(), spec.Address.IsValid(), spec.Address6.IsValid())
	routes, refused := r.refuseOverlaps(routes, joins, networks)
	masq, refusedMasq := r.refuseOverlaps(masq, joins, networks)
	for _, c := range refusedMasq { // a prefix of a family without a join address is masqueraded, not routed
		if !slices.ContainsFunc(refused, func(x hostnet.RouteConflict) bool { return x.Dst == c.Dst }) {
			refused = append(refused, c)
		}
	}
	spec.Routes, spec.Masquerade = r.routes(routes, spec.Address.IsValid(), spec.Address6.IsValid()), masq
	return spec, refused, nil
}

// gatewayOf is the gateway of p's family, if any.
func gatewayOf(p netip.Prefix, gws []netip.Addr) netip.Addr {
	for _, gw := range gws {
		if gw.Is4() == p.Addr().Is4() {
			return gw
		}
	}
	return netip.Addr{}
}

// routes are the networks reached through ovn0: the pods' subnets, and the Services'
// ClusterIP ranges of each family ovn0 has an address of when edgeovn serves Services (the
// load balancers on the join switch answer the host's traffic to them; node ports are sent
// there too).
func (r *Role) routes(pods []netip.Prefix, v4, v6 bool) []netip.Prefix {
	out := slices.Clone(pods)
	if !r.req.Services {
		return out
	}
	for _, p := range r.req.ServiceCIDRs {
		if p.Addr().Is4() && v4 || p.Addr().Is6() && v6 {
			out = append(out, p)
		}
	}
	return out
}

// followNodeIP gives the Node's InternalIP to the encapsulation address when it is taken from
// there (encap-ip-from node-ip), and syncs it at once when it changed.
func (r *Role) followNodeIP(ctx context.Context, node *corev1.Node) {
	if r.req.EncapIPFrom != encapFromNodeIP || !r.encap.setNodeIP(annotation.NodeInternalIP(node)) {
		return
	}
	if err := r.syncEncap(ctx, r.log); err != nil {
		r.log.Warn("find encapsulation address, will retry", "err", err)
	}
}
