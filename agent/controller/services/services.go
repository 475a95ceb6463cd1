package services

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/agent/subnetcheck"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Request is what the Services feature shares with the rest of the controller role.
type Request struct {
	NB      *northbound.Client
	Log     *slog.Logger
	Metrics *metrics.Metrics // nil: none
	// Reserved are the networks no external or LoadBalancer IP may be in (the pod, join and
	// service networks).
	Reserved []subnetcheck.Reserved
	// PodNetworks are the pod networks (cluster-cidr, both families): a LoadBalancer IP
	// whose source ranges leave one out is not a VIP for pods (podVIPs).
	PodNetworks []netip.Prefix
	// Events receives the ServiceIPRefused and SourceRangeInvalid Warnings; nil: logged only.
	Events record.EventRecorder
}

// Controller is the feature that turns Services into OVN load balancers in the cluster's
// load balancer group, which every edgeovn switch carries: the DNAT happens in OVN on the
// client's own switch, so replies are un-NATed there too.
type Controller struct {
	req      Request
	log      *slog.Logger
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	nodes    corelisters.NodeLister
	queue    workqueue.TypedRateLimitingInterface[string] // Service keys
	// switches carry the group: every pod switch, and join, so the host's own traffic to a
	// ClusterIP through ovn0 is balanced in OVN too.
	switches []string
	// observe, if set, is told how long each sync took from its first event (bench, tests).
	observe func(key string, since time.Duration)
	pending pendingSince
	refused refusalMemo
}

// New is the Services feature of one term; the controller registers, reconciles and runs it.
func New(req Request) *Controller {
	return &Controller{req: req, log: req.Log.With("feature", "services"), queue: queue.New("services"),
		switches: []string{kubeovn.DefaultSubnet, kubeovn.JoinSubnet}}
}

// Name is the feature's name in logs.
func (s *Controller) Name() string { return "services" }

// Register adds the Service, EndpointSlice and Node handlers to the term's informers.
func (s *Controller) Register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	svcs, slices := f.Services(), f.EndpointSlices()
	s.services, s.slices = svcs.Lister(), slices.Lister()
	onService := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			s.enqueue(key)
		}
	}
	if _, err := svcs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onService, UpdateFunc: func(_, obj any) { onService(obj) }, DeleteFunc: onService,
	}); err != nil {
		return nil, fmt.Errorf("watch services: %w", err)
	}
	onSlice := func(obj any) {
		if key, ok := sliceService(obj); ok {
			s.enqueue(key)
		}
	}
	if _, err := slices.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onSlice, UpdateFunc: func(_, obj any) { onSlice(obj) }, DeleteFunc: onSlice,
	}); err != nil {
		return nil, fmt.Errorf("watch endpoint slices: %w", err)
	}
	nodes := f.Nodes().Informer()
	s.nodes = f.Nodes().Lister()
	if _, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: s.onNodes, DeleteFunc: s.onNodes}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	return []cache.InformerSynced{svcs.Informer().HasSynced, slices.Informer().HasSynced}, nil
}

func (s *Controller) enqueue(key string) {
	s.pending.mark(key)
	s.queue.Add(key)
}

// sliceService is the key of the Service an EndpointSlice belongs to.
func sliceService(obj any) (string, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	slice, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return "", false
	}
	name := slice.Labels[discoveryv1.LabelServiceName]
	if name == "" {
		return "", false
	}
	return slice.Namespace + "/" + name, true
}

// Reconcile attaches the group to the switches and deletes the load balancers of Services
// that are gone or no longer served; the queue then brings every Service up to date (a
// Service already right costs no write).
func (s *Controller) Reconcile(ctx context.Context) error {
	nb := s.req.NB
	if err := nb.EnsureLoadBalancerGroup(ctx, northbound.LoadBalancerGroupSpec{Name: northbound.ClusterLoadBalancerGroup,
		Switches: s.switches}); err != nil {
		return err
	}
	owners, err := nb.LoadBalancerOwners(ctx, ovn.KindService)
	if err != nil {
		return err
	}
	removed := 0
	for owner := range owners {
		if s.served(owner) {
			continue
		}
		if err := s.sync(ctx, owner); err != nil {
			return err
		}
		removed++
	}
	nodes, err := s.nodeNames()
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, n := range nodes {
		keep[n] = true
	}
	if _, err := nb.DeleteTemplateVarRows(ctx, keep); err != nil {
		return err
	}
	if removed > 0 {
		s.log.Info("removed load balancers of services gone while no controller ran", "services", removed)
	}
	return nil
}

// served reports whether the Service named "namespace/name" exists and is programmed.
func (s *Controller) served(key string) bool {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false
	}
	svc, err := s.services.Services(ns).Get(name)
	return err == nil && servesLoadBalancers(svc)
}

// Run syncs the queued Services until ctx ends.
func (s *Controller) Run(ctx context.Context) {
	queue.Run(ctx, s.queue, queue.Worker{Kind: "service", Sync: s.sync, Log: s.req.Log, Metrics: s.req.Metrics})
}

// sync makes one Service's load balancers (and, for internalTrafficPolicy Local, its
// template variables) match the Service and its EndpointSlices.
func (s *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a key we queued: nothing to retry
	}
	owner := northbound.OwnerRef{Kind: ovn.KindService, Name: key}
	var want []northbound.LoadBalancerSpec
	vars := northbound.TemplateVars{Prefix: templatePrefix(key)}
	svc, err := s.services.Services(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		s.refused.forget(key)
	case err != nil:
		return fmt.Errorf("get service %s: %w", key, err)
	default:
		eps, err := s.slices.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}))
		if err != nil {
			return fmt.Errorf("list endpoint slices of %s: %w", key, err)
		}
		nodes, err := s.nodeNames()
		if err != nil {
			return err
		}
		external := s.servedExternal(svc)
		var local []northbound.LoadBalancerSpec
		local, vars = desiredLocal(svc, eps, nodes)
		want = append(desiredLoadBalancers(svc, eps, external), local...)
	}
	wrote, err := s.apply(ctx, northbound.OwnedLoadBalancers{Owner: owner, Group: northbound.ClusterLoadBalancerGroup, Want: want}, vars)
	if err != nil {
		if errors.Is(err, ovn.ErrNotOwned) {
			s.log.Error("service's load balancer name is held by a row edgeovn does not own", "service", key, "err", err)
			return nil
		}
		return err
	}
	if since, ok := s.pending.done(key); ok && wrote {
		s.log.Debug("service load balancers updated", "service", key, "load_balancers", len(want), "since_event", since)
		if s.observe != nil {
			s.observe(key, since)
		}
	}
	return nil
}

// apply writes variables before the load balancers that use them, and removes them after.
func (s *Controller) apply(ctx context.Context, lbs northbound.OwnedLoadBalancers, vars northbound.TemplateVars) (bool, error) {
	nb := s.req.NB
	if len(vars.Values) > 0 {
		wv, err := nb.SyncTemplateVars(ctx, vars)
		if err != nil {
			return false, err
		}
		wl, err := nb.SyncLoadBalancers(ctx, lbs)
		return wv || wl, err
	}
	wl, err := nb.SyncLoadBalancers(ctx, lbs)
	if err != nil {
		return wl, err
	}
	wv, err := nb.SyncTemplateVars(ctx, vars)
	return wv || wl, err
}

func (s *Controller) nodeNames() ([]string, error) {
	nodes, err := s.nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out, nil
}

// onNodes re-syncs the internalTrafficPolicy Local Services when a node comes or goes: each
// node's chassis needs its own value of their variables.
func (s *Controller) onNodes(any) {
	svcs, err := s.services.List(labels.Everything())
	if err != nil {
		return
	}
	for _, svc := range svcs {
		if localOnly(svc) {
			s.enqueue(svc.Namespace + "/" + svc.Name)
		}
	}
}
