package node

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// subnetView is what the host wiring needs of the cluster's kubeovn.io/v1 Subnets: every
// validated pod subnet's CIDRs are routed to OVN through ovn0 (as the cluster CIDR is), and
// those with natOutgoing are masqueraded when leaving the host; a subnet without it keeps its
// pods' addresses on the way out, as in Kube-OVN. Only Subnets the controller has validated
// count, so an overlapping or malformed one never becomes a route.
type subnetView struct {
	mu     sync.Mutex
	routes []netip.Prefix
	masq   []netip.Prefix
	// defaultNAT is ovn-default's natOutgoing; true until its object says otherwise.
	defaultNAT bool
	// u2o are the underlay subnets with u2oInterconnection, by name: their pods' gateways
	// (u2o.go).
	u2o map[string]u2oGateway
	// providers are the applied Subnets' spec.providers; read says the list has been read.
	providers map[string]bool
	read      bool
	// informer is the Subnet informer the view is made from (nil without a dynamic client),
	// shared with the BGP speaker's announcement.
	informer cache.SharedIndexInformer
	// mtu are the Subnets' spec.mtu, by name, where set (subnetmtu.go).
	mtu map[string]int
}

// watchSubnets keeps the view current from a Subnet informer and calls poke on each change.
// Without a dynamic client (nil), the view stays empty: only the cluster CIDR is wired.
func watchSubnets(ctx context.Context, dyn dynamic.Interface, log *slog.Logger, poke func(any)) (*subnetView, error) {
	v := &subnetView{defaultNAT: true}
	if dyn == nil {
		return v, nil
	}
	inf := kubeapi.DynamicInformer(dyn, kubeovn.SubnetResource).Informer()
	v.informer = inf
	update := func(any) {
		v.refresh(inf.GetStore().List())
		poke(nil)
	}
	// The first wiring waits (briefly) for the Subnets: wired without them, a restart would
	// drop the other subnets' routes until the list arrived. Without the CRD (a cluster whose
	// controller has not installed it yet) the list cannot come: the first NotFound ends the
	// wait, and the wiring goes on.
	wait, cancel := context.WithTimeout(ctx, subnetListWait)
	defer cancel()
	if err := inf.SetWatchErrorHandlerWithContext(crdPending(log, cancel)); err != nil {
		return nil, fmt.Errorf("watch subnets: %w", err)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: update, UpdateFunc: func(_, obj any) { update(obj) }, DeleteFunc: update,
	}); err != nil {
		return nil, fmt.Errorf("watch subnets: %w", err)
	}
	go inf.RunWithContext(ctx)
	if cache.WaitForCacheSync(wait.Done(), inf.HasSynced) {
		v.refresh(inf.GetStore().List())
	}
	return v, nil
}

// subnetListWait bounds the wait for the first Subnet list (a variable for tests).
var subnetListWait = 5 * time.Second

func (v *subnetView) refresh(objs []any) {
	var routes, masq []netip.Prefix
	defaultNAT := true
	u2o := map[string]u2oGateway{}
	providers := map[string]bool{}
	mtu := map[string]int{}
	for _, obj := range objs {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || u.GetName() == "join" {
			continue
		}
		sn, err := kubeovn.FromUnstructured(u)
		if err != nil || !sn.IsValidated() && !sn.IsReady() {
			continue // a refused change of an applied subnet keeps it Ready: still routed
		}
		if m, ok := v.subnetMTU(sn); ok {
			mtu[sn.Name] = m
		}
		if sn.Name == "ovn-default" {
			defaultNAT = sn.Spec.NatOutgoing
		}
		providers[sn.Spec.Provider] = true
		if kubeovn.IPAMOnlyProvider(sn.Spec.Provider) {
			continue // another plugin's network (macvlan) on the host's own: not OVN's to route
		}
		custom := kubeovn.VpcOf(sn.Spec) != kubeovn.DefaultVpc
		g, isU2O := u2oGatewayOf(sn)
		if sn.Spec.Vlan != "" && isU2O {
			u2o[sn.Name] = g // on a custom VPC too: its pods' gateway is that VPC's router
		}
		if custom {
			continue // a custom VPC's router is not linked to join: no host reaches it (docs/vpc.md)
		}
		cidrs, err := kubeovn.CIDRs(sn.Spec)
		if err != nil {
			continue
		}
		if sn.Spec.Vlan != "" {
			// An underlay subnet is on the site's network, reached through its router; with
			// u2oInterconnection the hosts reach it through ovn0 and the cluster router, as
			// in Kube-OVN.
			if isU2O && len(g.ips) > 0 {
				routes = append(routes, cidrs...)
			}
			continue
		}
		routes = append(routes, cidrs...)
		if sn.Spec.NatOutgoing {
			masq = append(masq, cidrs...)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.routes, v.masq, v.defaultNAT, v.u2o, v.mtu = routes, masq, defaultNAT, u2o, mtu
	v.providers, v.read = providers, true
}

// hasProvider says whether an applied Subnet has spec.provider p; checked is false until the
// Subnets have been read.
func (v *subnetView) hasProvider(p string) (known, checked bool) {
	if v == nil {
		return false, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.providers[p], v.read
}

// wiring returns the prefixes to route through ovn0, those of the families ovn0 has a join
// address of (v4, v6), and the prefixes to masquerade, the cluster CIDRs among them
// (masqueraded unless ovn-default says natOutgoing: false).
func (v *subnetView) wiring(clusters []netip.Prefix, v4, v6 bool) (routes, masq []netip.Prefix) {
	v.mu.Lock()
	defer v.mu.Unlock()
	add := func(list []netip.Prefix, p netip.Prefix) []netip.Prefix {
		if slices.Contains(list, p) {
			return list
		}
		return append(list, p)
	}
	routed := func(p netip.Prefix) bool { return p.Addr().Is4() && v4 || p.Addr().Is6() && v6 }
	for _, cluster := range clusters {
		if routed(cluster) {
			routes = add(routes, cluster)
		}
		if v.defaultNAT {
			masq = add(masq, cluster)
		}
	}
	for _, p := range v.routes {
		if routed(p) {
			routes = add(routes, p)
		}
	}
	for _, p := range v.masq {
		if !slices.Contains(clusters, p) || v.defaultNAT {
			masq = add(masq, p)
		}
	}
	return routes, masq
}

// watchSubnets starts the Subnet view with the request's dynamic client, if it has one.
func (r *Role) watchSubnets(ctx context.Context, poke func(any)) (*subnetView, error) {
	if r.req.Dynamic == nil {
		return watchSubnets(ctx, nil, r.log, poke)
	}
	dyn, err := r.req.Dynamic(ctx)
	if err != nil {
		return nil, fmt.Errorf("subnet client: %w", err)
	}
	return watchSubnets(ctx, dyn, r.log, poke)
}

// crdPending handles the Subnet informer's list and watch errors: until the controller has
// installed the kubeovn.io/v1 CRD the API answers NotFound, which is expected (a cluster's
// first boot, an agent host up before the controller); it is said once at Info, not at every
// retry as an error, and missing is called. Any other error goes to client-go's default
// handler.
func crdPending(log *slog.Logger, missing func()) cache.WatchErrorHandlerWithContext {
	var said atomic.Bool
	return func(ctx context.Context, r *cache.Reflector, err error) {
		if !apierrors.IsNotFound(err) {
			cache.DefaultWatchErrorHandler(ctx, r, err)
			return
		}
		missing()
		if said.CompareAndSwap(false, true) {
			log.Info("kubeovn.io/v1 Subnets are not served yet (the controller installs their CRD): only the cluster CIDR is wired until they are", "err", err)
		}
	}
}
