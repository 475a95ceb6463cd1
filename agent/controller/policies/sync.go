package policies

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/agent/netpol"
	"github.com/edgeovn/edgeovn/ovn"
)

// missingPortRetry is when a namespace whose policies name a port OVN does not have yet
// (its pod is being wired) is synced again.
const missingPortRetry = 2 * time.Second

// syncNamespace makes the rows of the namespace's policies and its default-deny port groups
// what the policies, pods and namespaces say now, and deletes the rows of its policies that
// are gone. Allows are written before the deny groups, and stale allows deleted after them,
// so no allowed connection is cut while the namespace changes.
func (p *Controller) syncNamespace(ctx context.Context, ns string) error {
	list, err := p.policies.NetworkPolicies(ns).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list network policies of %s: %w", ns, err)
	}
	slices.SortFunc(list, func(a, b *networkingv1.NetworkPolicy) int { return strings.Compare(a.Name, b.Name) })
	cluster, err := p.snapshot()
	if err != nil {
		return err
	}
	results := make([]netpol.Result, len(list))
	missing := false
	for i, np := range list {
		results[i] = netpol.Translate(np, cluster)
		res, err := p.req.NB.EnsureACLGroup(ctx, results[i].Rows)
		if err != nil {
			return err
		}
		p.wrote(res.Wrote)
		missing = missing || len(res.Missing) > 0
		p.report(np, results[i].Problems)
	}
	if err := p.syncDenyGroups(ctx, ns, results, cluster); err != nil {
		return err
	}
	if err := p.deleteStale(ctx, ns, list); err != nil {
		return err
	}
	if err := p.announce(ctx); err != nil {
		return err
	}
	if missing {
		p.queue.AddAfter(ns, missingPortRetry)
	}
	return nil
}

// syncDenyGroups makes the namespace's default-deny rows what its policies select.
func (p *Controller) syncDenyGroups(ctx context.Context, ns string, results []netpol.Result, cluster netpol.Cluster) error {
	if len(results) > 0 {
		res, err := p.req.NB.EnsureACLGroup(ctx, netpol.Namespace(ns, results, cluster))
		p.wrote(res.Wrote)
		return err
	}
	owners, err := p.req.NB.ACLGroupOwners(ctx, ovn.KindNamespace)
	if err != nil || !slices.Contains(owners, ns) {
		return err
	}
	n, err := p.req.NB.DeleteOwned(ctx, netpol.NamespaceOwner(ns))
	p.wrote(n > 0)
	if err == nil {
		p.req.Log.Info("namespace has no network policy left: default deny removed", "namespace", ns, "rows", n)
	}
	return err
}

// deleteStale deletes the rows of the namespace's policies that no longer exist.
func (p *Controller) deleteStale(ctx context.Context, ns string, live []*networkingv1.NetworkPolicy) error {
	owners, err := p.req.NB.ACLGroupOwners(ctx, ovn.KindNetworkPolicy)
	if err != nil {
		return err
	}
	for _, o := range owners {
		name, ok := strings.CutPrefix(o, ns+"/")
		if !ok || slices.ContainsFunc(live, func(np *networkingv1.NetworkPolicy) bool { return np.Name == name }) {
			continue
		}
		n, err := p.req.NB.DeleteOwned(ctx, netpol.Owner(ns, name))
		p.wrote(n > 0)
		if err != nil {
			return err
		}
		p.reported.Delete(o)
		p.req.Log.Info("network policy removed", "namespace", ns, "policy", name, "rows", n)
	}
	return nil
}

// wrote records that policy rows were written (or deleted).
func (p *Controller) wrote(yes bool) {
	if yes {
		p.writes.Add(1)
	}
}

// announce bumps NB_Global's nb_cfg when rows were written since the last bump, including by
// a sync that failed half-way: each node's ovn-controller reports the number once it has
// installed the change, and the node role then purges its userspace datapath's flow cache
// (agent/node, flowcache.go). Without an NB_Global row no ovn-northd has run, so no
// ovn-controller would report: there is nothing to bump.
func (p *Controller) announce(ctx context.Context) error {
	w := p.writes.Load()
	if w == p.announced.Load() {
		return nil
	}
	if err := p.req.NB.BumpNBCfg(ctx); err != nil && !errors.Is(err, ovn.ErrNotFound) {
		return err
	}
	// Writes counted after w are announced by the sync that made them.
	for a := p.announced.Load(); a < w && !p.announced.CompareAndSwap(a, w); a = p.announced.Load() {
	}
	return nil
}

// snapshot reads the pods that hold an OVN port, and every namespace's labels.
func (p *Controller) snapshot() (netpol.Cluster, error) {
	c := netpol.Cluster{Namespaces: map[string]map[string]string{}, IPv6: p.req.IPv6}
	nss, err := p.namespaces.List(labels.Everything())
	if err != nil {
		return c, fmt.Errorf("list namespaces: %w", err)
	}
	for _, n := range nss {
		c.Namespaces[n.Name] = n.Labels
	}
	pods, err := p.pods.List(labels.Everything())
	if err != nil {
		return c, fmt.Errorf("list pods: %w", err)
	}
	for _, pod := range pods {
		if pp, ok := p.policyPod(pod); ok {
			c.Pods = append(c.Pods, pp)
		}
	}
	return c, nil
}

// policyPod is the pod as a translation sees it; false for pods without a port.
func (p *Controller) policyPod(pod *corev1.Pod) (netpol.Pod, bool) {
	out := netpol.Pod{Namespace: pod.Namespace, Name: pod.Name, Labels: pod.Labels, HostNetwork: pod.Spec.HostNetwork}
	for _, c := range pod.Spec.Containers {
		out.Ports = append(out.Ports, c.Ports...)
	}
	if pod.Spec.HostNetwork {
		return out, pod.Spec.NodeName != ""
	}
	if !podnet.HoldsNetwork(pod) {
		return out, false
	}
	if p.req.Lost(pod.Namespace + "/" + pod.Name) {
		return out, false
	}
	n, err := annotation.Decode(pod.Annotations)
	if err != nil {
		return out, false
	}
	out.IPs = n.IPs
	return out, true
}

// report sends a Warning Event on the policy when what edgeovn cannot express changed.
func (p *Controller) report(np *networkingv1.NetworkPolicy, problems []string) {
	msg := strings.Join(problems, "; ")
	key := np.Namespace + "/" + np.Name
	if last, ok := p.reported.Load(key); (ok && last == msg) || (!ok && msg == "") {
		return
	}
	p.reported.Store(key, msg)
	if msg != "" {
		p.req.Events.Event(np, corev1.EventTypeWarning, ReasonPolicyUnsupported, msg)
		p.req.Log.Warn("network policy not fully enforced", "namespace", np.Namespace, "policy", np.Name, "problems", msg)
	}
}

// syncHosts keeps the address set of the nodes' join addresses, which every default-deny
// ingress group lets in (kubelet probes come from the host's ovn0).
func (p *Controller) syncHosts(ctx context.Context) error {
	nodes, err := p.nodes.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	var ips []netip.Addr
	for _, n := range nodes {
		if a, err := annotation.Decode(n.Annotations); err == nil && a.Switch == kubeovn.JoinSubnet {
			ips = append(ips, a.IPs...)
		}
	}
	res, err := p.req.NB.EnsureACLGroup(ctx, netpol.Hosts(ips))
	p.wrote(res.Wrote)
	if err != nil {
		return err
	}
	return p.announce(ctx)
}

// Reconcile syncs the hosts' set and every namespace that has policies or still holds
// rows in OVN, which deletes the rows of policies deleted while no controller ran.
func (p *Controller) Reconcile(ctx context.Context) error {
	if err := p.syncHosts(ctx); err != nil {
		return err
	}
	namespaces := map[string]bool{}
	list, err := p.policies.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list network policies: %w", err)
	}
	for _, np := range list {
		namespaces[np.Namespace] = true
	}
	for _, kind := range []string{ovn.KindNetworkPolicy, ovn.KindNamespace} {
		owners, err := p.req.NB.ACLGroupOwners(ctx, kind)
		if err != nil {
			return err
		}
		for _, o := range owners {
			ns, _, _ := strings.Cut(o, "/")
			namespaces[ns] = true
		}
	}
	for ns := range namespaces {
		if err := p.syncNamespace(ctx, ns); err != nil {
			return fmt.Errorf("sync network policies of namespace %s: %w", ns, err)
		}
	}
	return nil
}
