package securitygroups

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/controller/queue"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/metrics"
	"github.com/edgeovn/edgeovn/agent/secgroup"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Finalizer holds a deleted SecurityGroup until no other group's rule names it and its rows
// are gone.
const Finalizer = "edgeovn.io/security-group"

// byGroupIndex indexes pods by the groups their annotation names.
const byGroupIndex = "securityGroups"

// Request is what the SecurityGroups share with the rest of the controller role.
type Request struct {
	// Dynamic reads the SecurityGroups and writes their status and finalizer (the CRD is
	// installed by the Subnets' Prepare, with the other kubeovn.io CRDs).
	Dynamic dynamic.Interface
	NB      *northbound.Client
	// Events reports a refused group on it, and a missing group on the pod naming it.
	Events record.EventRecorder
	Log    *slog.Logger
	// Metrics counts the syncs; nil: none.
	Metrics *metrics.Metrics
	// Hosts are the join networks the nodes' ovn0 addresses are in: always let in.
	Hosts []netip.Prefix
	// Lost says the pod ("namespace/name") lost its annotated address to an older claim: it
	// has no port. Nil: none.
	Lost func(key string) bool
}

// Controller turns kubeovn.io/v1 SecurityGroups into port groups, address sets and ACLs
// (package secgroup translates; sync.go applies; status.go reports).
type Controller struct {
	req    Request
	log    *slog.Logger
	groups cache.GenericLister
	inf    cache.SharedIndexInformer
	pods   corelisters.PodLister
	byPod  cache.Indexer
	queue  workqueue.TypedRateLimitingInterface[string] // group names
	// reported holds "namespace/pod/group" of the missing groups an Event was sent for.
	reported sync.Map
}

// New is the SecurityGroups of one term; the controller registers, reconciles and runs them.
func New(req Request) *Controller {
	return &Controller{req: req, log: req.Log.With("feature", "security-groups"), queue: queue.New("securitygroups")}
}

// Name is the feature's name in logs.
func (c *Controller) Name() string { return "security-groups" }

// Register adds the SecurityGroup informer, and an index and a handler on the term's pod
// informer: a pod joins the groups it names in ovn.kubernetes.io/security_groups.
func (c *Controller) Register(f *kubeapi.Informers) ([]cache.InformerSynced, error) {
	gi := f.Dynamic(c.req.Dynamic, kubeovn.SecurityGroupResource)
	pi := f.Pods()
	c.groups, c.inf, c.pods = gi.Lister(), gi.Informer(), pi.Lister()
	if err := pi.Informer().AddIndexers(cache.Indexers{byGroupIndex: func(obj any) ([]string, error) {
		if p, ok := obj.(*corev1.Pod); ok {
			return GroupsOf(p), nil
		}
		return nil, nil
	}}); err != nil {
		return nil, fmt.Errorf("index pods by security group: %w", err)
	}
	c.byPod = pi.Informer().GetIndexer()
	// A group's change may release a deleted group it named, or refuse one naming it: few
	// groups, all of them are queued.
	all := func(any) {
		for _, key := range c.inf.GetStore().ListKeys() {
			c.queue.Add(key)
		}
	}
	if _, err := c.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: all, UpdateFunc: func(_, obj any) { all(obj) }, DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.queue.Add(key)
			}
			all(obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch security groups: %w", err)
	}
	if _, err := pi.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(nil, obj) },
		UpdateFunc: c.podChanged,
		DeleteFunc: func(obj any) { c.podChanged(obj, nil) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods for security groups: %w", err)
	}
	return []cache.InformerSynced{c.inf.HasSynced, pi.Informer().HasSynced}, nil
}

// GroupsOf are the groups the pod names in ovn.kubernetes.io/security_groups ("sg1,sg2",
// spaces ignored, as Kube-OVN), sorted, each once.
func GroupsOf(p *corev1.Pod) []string {
	v := p.Annotations[annotation.SecurityGroups]
	if v == "" {
		return nil
	}
	var out []string
	for _, g := range strings.Split(strings.ReplaceAll(v, " ", ""), ",") {
		if g != "" {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// podChanged queues the groups an added, deleted or changed pod names (before and after) when
// what a group reads of it changed: its groups, address, port.
func (c *Controller) podChanged(oldObj, obj any) {
	pod := func(o any) *corev1.Pod {
		if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = t.Obj
		}
		p, _ := o.(*corev1.Pod)
		return p
	}
	old, cur := pod(oldObj), pod(obj)
	if old != nil && cur != nil && slices.Equal(GroupsOf(old), GroupsOf(cur)) &&
		old.Annotations[annotation.IPAddress] == cur.Annotations[annotation.IPAddress] &&
		old.Annotations[annotation.Allocated] == cur.Annotations[annotation.Allocated] &&
		old.Annotations[annotation.Routed] == cur.Annotations[annotation.Routed] &&
		podnet.HoldsNetwork(old) == podnet.HoldsNetwork(cur) {
		return
	}
	for _, p := range []*corev1.Pod{old, cur} {
		if p != nil {
			for _, g := range GroupsOf(p) {
				c.queue.Add(g)
			}
		}
	}
}

// Reconcile syncs every SecurityGroup, removes the rows of groups deleted while no controller
// ran, and tells the pods that name a group that does not exist.
func (c *Controller) Reconcile(ctx context.Context) error {
	for _, name := range c.inf.GetStore().ListKeys() {
		if err := c.sync(ctx, name); err != nil {
			return fmt.Errorf("sync security group %s: %w", name, err)
		}
	}
	owners, err := c.req.NB.ACLGroupOwners(ctx, ovn.KindSecurityGroup)
	if err != nil {
		return err
	}
	for _, name := range owners {
		if _, err := c.groups.Get(name); err == nil {
			continue
		}
		if err := c.gone(ctx, name); err != nil {
			return err
		}
	}
	for _, name := range c.byPod.ListIndexFuncValues(byGroupIndex) {
		if _, err := c.groups.Get(name); err != nil {
			c.reportMissing(name)
		}
	}
	return nil
}

// Run processes the groups until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	queue.Run(ctx, c.queue, queue.Worker{Kind: "security group", Sync: c.sync, Log: c.req.Log, Metrics: c.req.Metrics})
}

// gone removes the rows of a group whose object no longer exists, and tells the pods that
// still name it.
func (c *Controller) gone(ctx context.Context, name string) error {
	n, err := c.req.NB.DeleteOwned(ctx, secgroup.Owner(name))
	if err != nil {
		return err
	}
	if n > 0 {
		c.log.Info("security group removed", "group", name, "rows", n)
		if err := c.announce(ctx); err != nil {
			return err
		}
	}
	c.reportMissing(name)
	return nil
}

// announce bumps NB_Global's nb_cfg after a change, so the nodes purge their userspace
// datapath's flow cache (as the policies do, agent/node flowcache.go). Without an NB_Global
// row no ovn-northd has run: there is nothing to announce.
func (c *Controller) announce(ctx context.Context) error {
	if err := c.req.NB.BumpNBCfg(ctx); err != nil && !errors.Is(err, ovn.ErrNotFound) {
		return err
	}
	return nil
}
