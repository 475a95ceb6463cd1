package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// reconcile makes the IPAM hold exactly what the cluster's pod annotations claim, before
// anything new is allocated: a database behind the cluster (a crash, a restored file, a new
// leader) adopts what it lacks and releases what no pod holds. When two pods claim one
// address, the older claim wins and the other pod gets a Warning Event.
func (c *Controller) reconcile(ctx context.Context) error {
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	byOwner := map[string]*corev1.Pod{}
	claimed := map[ipam.Owner]bool{} // interfaces whose annotations claim an allocation
	var claims []ipam.Allocation
	for _, pod := range pods {
		if !podnet.HoldsNetwork(pod) {
			continue
		}
		n, err := annotation.Decode(pod.Annotations)
		if err != nil || !podnet.IsPodSubnet(n.Switch) {
			continue // not a claim: syncPod allocates it anew or reports it
		}
		key := pod.Namespace + "/" + pod.Name
		byOwner[key] = pod
		claims = append(claims, ipam.Allocation{Subnet: n.Switch, Owner: owner(key), IPs: n.IPs, MAC: n.MAC,
			Allocated: pod.CreationTimestamp.Time})
		claimed[owner(key)] = true
		for _, a := range attachmentClaims(pod) {
			claims = append(claims, a)
			claimed[a.Owner] = true
		}
	}
	nodeClaims, err := c.reconcileNodes(ctx)
	if err != nil {
		return err
	}
	claims = append(claims, nodeClaims...)
	ports, err := c.nb.PodPorts(ctx)
	if err != nil {
		return fmt.Errorf("list pod ports: %w", err)
	}
	for _, pc := range unannotatedPortClaims(ports, claimed, pods) {
		c.log.Info("pod port in northbound without an annotated allocation: its address stays the pod's",
			"pod", pc.Owner.Pod, "ip", pc.IPs)
		claims = append(claims, pc)
	}
	kept, stale := c.splitKept(stalePorts(ports, byOwner, pods))
	for _, p := range append(slices.Clone(kept), stale...) {
		// Newest claims: a live pod always wins an address over a dead pod's leftover port,
		// kept for its StatefulSet or not.
		claims = append(claims, ipam.Allocation{Subnet: p.Switch, Owner: portOwner(p), IPs: p.IPs, MAC: p.MAC,
			Allocated: time.Now()})
	}
	for _, f := range c.features {
		if cl, ok := f.(claimer); ok {
			claims = append(claims, cl.Claims()...)
		}
	}
	res, err := c.ipam.Reconcile(ctx, claims)
	if err != nil {
		return fmt.Errorf("reconcile ipam with %d pod claims: %w", len(claims), err)
	}
	var lost []northbound.PodPort // live pods' ports whose address an older pod holds
	for _, cf := range res.Conflicts {
		pod := byOwner[cf.Claim.Owner.Pod]
		if pod == nil {
			stale = append(stale, lostKept(kept, cf.Claim.Owner.Pod)...)
			continue // a dead pod's port lost to a live pod: removed below either way
		}
		if cf.Claim.Owner.Interface != primaryInterface { // an attachment: only its port goes
			c.conflicts.Store(cf.Claim.Owner.String(), true)
			lost = append(lost, attachmentPortsOf(ports, cf.Claim.Owner)...)
		} else {
			c.conflicts.Store(cf.Claim.Owner.Pod, true)
			lost = append(lost, portsOf(ports, cf.Claim.Owner.Pod)...)
		}
		msg := fmt.Sprintf("address %v / MAC %s annotated on this pod cannot be kept: %v", cf.Claim.IPs, cf.Claim.MAC, cf.Err)
		if cf.Holder.Pod != "" {
			msg = fmt.Sprintf("address %v / MAC %s annotated on this pod is held by the older pod %s: %v", cf.Claim.IPs, cf.Claim.MAC, cf.Holder.Pod, cf.Err)
		}
		c.events.Event(pod, corev1.EventTypeWarning, ReasonAddressConflict, msg)
		c.log.Warn("allocation conflict", "pod", pod.Name, "namespace", pod.Namespace, "ip", cf.Claim.IPs, "holder", cf.Holder.Pod, "err", cf.Err)
	}
	if err := c.removeStale(ctx, stale); err != nil {
		return err
	}
	if err := c.removeLost(ctx, lost); err != nil {
		return err
	}
	c.restorePorts(ctx, byOwner, ports)
	if err := c.importReleased(ctx); err != nil {
		return err
	}
	c.log.Info("ipam reconciled with the cluster", "claims", len(claims), "adopted", len(res.Adopted),
		"released", len(res.Released), "conflicts", len(res.Conflicts), "stale_ports", len(stale), "kept_for_statefulsets", len(kept))
	return nil
}

// splitKept separates the ports of gone pods whose StatefulSet keeps their addresses from
// the others.
func (c *Controller) splitKept(gone []northbound.PodPort) (kept, stale []northbound.PodPort) {
	for _, p := range gone {
		ns, name, _ := strings.Cut(p.Owner, "/")
		if c.keptForStatefulSet(ns, name, p) {
			kept = append(kept, p)
		} else {
			stale = append(stale, p)
		}
	}
	return kept, stale
}

// lostKept returns the kept port of pod, which lost its address to a live pod's claim: it
// goes (its address stays the live pod's).
func lostKept(kept []northbound.PodPort, pod string) []northbound.PodPort {
	for _, p := range kept {
		if p.Owner == pod {
			return []northbound.PodPort{p}
		}
	}
	return nil
}

// stalePorts lists edgeovn's pod ports whose pod no longer exists or has completed (while no
// controller ran). Their addresses were handed out and may still be in flight.
func stalePorts(ports []northbound.PodPort, annotated map[string]*corev1.Pod, pods []*corev1.Pod) []northbound.PodPort {
	live := make(map[string]bool, len(pods))
	for _, p := range pods {
		if !podnet.Completed(p) {
			live[p.Namespace+"/"+p.Name] = true
		}
	}
	var stale []northbound.PodPort
	for _, p := range ports {
		if !live[p.Owner] && annotated[p.Owner] == nil {
			stale = append(stale, p)
		}
	}
	return stale
}

// unannotatedPortClaims turns the ports of live pods that carry no allocation yet into claims
// of their pods: a controller that died after creating a pod's port and before annotating it
// left an address in northbound that no annotation names, and that the IPAM (another host's,
// or one that released it since) may not hold. Adopted, it stays the pod's (its sync finds it
// and annotates it); never handed to another pod while the port still carries it.
func unannotatedPortClaims(ports []northbound.PodPort, claimed map[ipam.Owner]bool, pods []*corev1.Pod) []ipam.Allocation {
	byKey := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		byKey[p.Namespace+"/"+p.Name] = p
	}
	var claims []ipam.Allocation
	for _, p := range ports {
		pod := byKey[p.Owner]
		if pod == nil || claimed[portOwner(p)] || !podnet.HoldsNetwork(pod) || len(p.IPs) == 0 || !podnet.IsPodSubnet(p.Switch) {
			continue
		}
		claims = append(claims, ipam.Allocation{Subnet: p.Switch, Owner: portOwner(p), IPs: p.IPs, MAC: p.MAC,
			Allocated: pod.CreationTimestamp.Time})
	}
	return claims
}

// removeStale deletes dead pods' ports before any new port can reuse their addresses, and
// releases the addresses now, so they queue behind every never-used one (late packets).
func (c *Controller) removeStale(ctx context.Context, stale []northbound.PodPort) error {
	for _, p := range stale {
		if err := c.nb.DeletePodPort(ctx, p.Switch, p.Name); err != nil {
			return fmt.Errorf("delete stale port %s: %w", p.Name, err)
		}
		if err := c.recordReleased(ctx, p.Switch, p.IPs); err != nil {
			return err
		}
		if err := c.ipam.ReleasePod(ctx, p.Owner); err != nil {
			return fmt.Errorf("release addresses of deleted pod %s: %w", p.Owner, err)
		}
		c.log.Info("removed port of a pod deleted or completed while no controller ran", "lsp", p.Name, "ip", p.IPs)
	}
	return nil
}

// removeLost deletes the ports of live pods that lost their annotated address to an older
// pod's claim (left by an earlier term), so northbound never holds one address on two ports.
// Nothing is released: the address is the older pod's.
func (c *Controller) removeLost(ctx context.Context, lost []northbound.PodPort) error {
	for _, p := range lost {
		if err := c.nb.DeletePodPort(ctx, p.Switch, p.Name); err != nil {
			return fmt.Errorf("delete port %s of a pod whose address another pod holds: %w", p.Name, err)
		}
		c.log.Warn("removed the port of a pod whose annotated address an older pod holds", "lsp", p.Name, "ip", p.IPs)
	}
	return nil
}

// portsOf returns pod's ports among ports.
func portsOf(ports []northbound.PodPort, pod string) []northbound.PodPort {
	var out []northbound.PodPort
	for _, p := range ports {
		if p.Owner == pod {
			out = append(out, p)
		}
	}
	return out
}

// attachmentPortsOf returns the port of the attachment o among ports.
func attachmentPortsOf(ports []northbound.PodPort, o ipam.Owner) []northbound.PodPort {
	var out []northbound.PodPort
	for _, p := range ports {
		if p.Owner == o.Pod && p.Provider == o.Interface {
			out = append(out, p)
		}
	}
	return out
}

// reconcileNodes removes the rows of nodes deleted while no controller ran (before their join
// addresses can be handed out again) and returns the join addresses live nodes' annotations
// claim.
func (c *Controller) reconcileNodes(ctx context.Context) ([]ipam.Allocation, error) {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	live := make(map[string]bool, len(nodes))
	var claims []ipam.Allocation
	for _, node := range nodes {
		live[node.Name] = true
		n, err := annotation.Decode(node.Annotations)
		if err != nil || n.Switch != kubeovn.JoinSubnet {
			continue
		}
		claims = append(claims, ipam.Allocation{Subnet: kubeovn.JoinSubnet, Owner: nodeOwner(node.Name), IPs: n.IPs, MAC: n.MAC,
			Allocated: node.CreationTimestamp.Time})
	}
	withRows, err := c.nb.Nodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("list nodes in ovn: %w", err)
	}
	for _, name := range withRows {
		if !live[name] {
			if err := c.deleteNode(ctx, name); err != nil {
				return nil, err
			}
		}
	}
	return claims, nil
}
