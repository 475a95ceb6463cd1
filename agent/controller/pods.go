package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/controller/podnet"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

func owner(key string) ipam.Owner { return ipam.Owner{Pod: key, Interface: "eth0"} }

// syncPod brings one pod's address, port and annotations to what the pod's existence asks for.
func (c *Controller) syncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not a pod key; nothing to retry
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return c.deletePod(ctx, ns, name)
	}
	if err != nil {
		return fmt.Errorf("get pod %s: %w", key, err)
	}
	if podnet.WantsNetwork(pod) && podnet.Completed(pod) {
		return c.deletePod(ctx, ns, name)
	}
	if !podnet.WantsNetwork(pod) {
		return nil
	}
	if n, err := annotation.Decode(pod.Annotations); err == nil {
		if !podnet.IsPodSubnet(n.Switch) {
			c.events.Eventf(pod, corev1.EventTypeWarning, ReasonAllocationFailed,
				"annotation claims %v on logical switch %q, which holds the nodes' addresses: a pod cannot have one (recreate the pod without it)", n.IPs, n.Switch)
			return nil
		}
		if err := c.ensureAllocated(ctx, pod, n); err != nil {
			return err
		}
		return c.syncAttachments(ctx, pod)
	} else if !errors.Is(err, annotation.ErrNotAllocated) {
		c.log.Warn("pod carries a broken allocation, allocating anew", "pod", key, "err", err)
	}
	return c.allocate(ctx, pod)
}

// allocate gives a new pod its address (or the one it pinned), its port, then its annotations.
func (c *Controller) allocate(ctx context.Context, pod *corev1.Pod) error {
	key := pod.Namespace + "/" + pod.Name
	pins, err := annotation.Requested(pod.Annotations)
	if err != nil {
		c.events.Event(pod, corev1.EventTypeWarning, ReasonAllocationFailed, err.Error())
		return nil // the pod's own annotation is wrong: its next update requeues it
	}
	asked := pins.Switch
	if asked == "" {
		if asked, err = c.defaultNetworkSubnet(ctx, pod); err != nil {
			return c.attachmentFailed(ctx, pod, err)
		}
	}
	subnet, err := c.subnets.PodSubnet(pod, asked)
	if err != nil {
		c.events.Eventf(pod, corev1.EventTypeWarning, ReasonAllocationFailed, "no subnet for this pod: %v", err)
		return nil // queued again when a subnet is applied, or the pod changes
	}
	// Attachments are resolved and their pins checked before anything is taken: a bad one
	// leaves the pod with nothing allocated.
	atts, err := c.attachmentsOf(ctx, pod)
	if err != nil {
		return c.attachmentFailed(ctx, pod, err)
	}
	if err := c.clearNetworkError(ctx, pod); err != nil {
		return err
	}
	a, err := c.allocateAddress(ctx, pod, subnet, pins)
	if err != nil {
		return c.allocationFailed(pod, pins, err) // the IPAM's error names the subnet
	}
	c.waiting.remove(key)
	c.kept.Delete(key) // a StatefulSet's pod back: its next deletion is news again
	c.subnets.Touched(subnet)
	n := c.network(a)
	if err := c.ensurePort(ctx, pod, n); err != nil {
		return err
	}
	if err := c.holdAfterPort(ctx, key); err != nil {
		return err
	}
	if err := c.annotate(ctx, pod, annotation.Encode(n)); err != nil {
		return err
	}
	c.log.Info("pod allocated", "pod", pod.Name, "namespace", pod.Namespace, "ip", a.IPs, "mac", a.MAC.String())
	return c.ensureAttachments(ctx, pod, atts)
}

// ensureAllocated adopts an annotated pod's allocation into the IPAM and OVN, idempotently.
func (c *Controller) ensureAllocated(ctx context.Context, pod *corev1.Pod, n annotation.Network) error {
	key := pod.Namespace + "/" + pod.Name
	if _, lost := c.conflicts.Load(key); lost {
		return nil // reported at reconciliation; the pod must be recreated
	}
	_, err := c.ipam.Allocate(ctx, ipam.Request{Subnet: n.Switch, Owner: owner(key), IPs: n.IPs, MAC: n.MAC})
	if errors.Is(err, ipam.ErrConflict) {
		c.conflicts.Store(key, true)
		c.events.Eventf(pod, corev1.EventTypeWarning, ReasonAddressConflict, "annotated address %v / MAC %s is held by another pod: %v", n.IPs, n.MAC, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("adopt allocation %v of pod %s: %w", n.IPs, key, err)
	}
	return c.ensurePort(ctx, pod, n)
}

// network is the annotation of an allocation: its address, and its subnet's CIDRs and gateways.
func (c *Controller) network(a ipam.Allocation) annotation.Network {
	n := annotation.Network{Switch: a.Subnet, IPs: a.IPs, MAC: a.MAC,
		CIDRs: c.req.ClusterCIDRs(), Gateways: c.req.ClusterGateways()}
	if net, ok := c.subnets.Network(a.Subnet); ok {
		n.CIDRs, n.Gateways = net.CIDRs, net.Gateways
	}
	return n
}

func (c *Controller) ensurePort(ctx context.Context, pod *corev1.Pod, n annotation.Network) error {
	spec := portSpec(pod, n)
	if err := c.nb.EnsurePodPort(ctx, spec); err != nil {
		return fmt.Errorf("ensure port %s: %w", spec.Name, err)
	}
	return nil
}

// portSpec is the northbound port of pod's primary interface with the allocation n; without
// port security when the pod's ovn.kubernetes.io/port_security is "false".
func portSpec(pod *corev1.Pod, n annotation.Network) northbound.PodPortSpec {
	return northbound.PodPortSpec{Switch: n.Switch, Name: annotation.PortName(pod.Namespace, pod.Name), MAC: n.MAC,
		IPs: n.IPs, Owner: pod.Namespace + "/" + pod.Name, Chassis: pod.Spec.NodeName, StatefulSet: statefulSetMark(pod),
		NoPortSecurity: pod.Annotations[annotation.PortSecurity] == "false"}
}

// annotate merges want into the pod's annotations (its network, its attachments', the
// network error), writing nothing when they already say it.
func (c *Controller) annotate(ctx context.Context, pod *corev1.Pod, want map[string]string) error {
	if len(want) == 0 {
		return nil
	}
	patch, err := annotation.Patch(pod.Annotations, want)
	if err != nil || patch == nil {
		return err
	}
	_, err = c.req.Kube.Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its delete event releases what was just allocated
	}
	if err != nil {
		return fmt.Errorf("annotate pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// deletePod removes the port of a pod that no longer exists (or has completed) and releases
// its addresses, unless its StatefulSet keeps them for the pod's next incarnation. It logs
// only when there was something to give back: completed pods come by again on every update
// and resync.
func (c *Controller) deletePod(ctx context.Context, ns, name string) error {
	lsp := annotation.PortName(ns, name)
	c.waiting.remove(ns + "/" + name)
	a, held := c.ipam.Get(owner(ns + "/" + name))
	port, found, err := c.nb.PodPort(ctx, lsp)
	if err != nil {
		return fmt.Errorf("look up port %s: %w", lsp, err)
	}
	if found && c.keptForStatefulSet(ns, name, port) {
		return nil
	}
	if found {
		if err := c.nb.DeletePodPort(ctx, port.Switch, lsp); err != nil {
			return fmt.Errorf("delete port %s: %w", lsp, err)
		}
	}
	if err := c.deleteAttachments(ctx, ns, name); err != nil {
		return err
	}
	if held {
		if err := c.recordReleased(ctx, a.Subnet, a.IPs); err != nil {
			return err
		}
		defer c.subnets.Touched(a.Subnet) // its count, and a deletion waiting for its last pod
	}
	c.conflicts.Delete(ns + "/" + name)
	if err := c.ipam.ReleasePod(ctx, ns+"/"+name); err != nil {
		return fmt.Errorf("release addresses of pod %s/%s: %w", ns, name, err)
	}
	if found || held {
		c.log.Info("pod released", "pod", name, "namespace", ns, "lsp", lsp)
	}
	if held {
		c.waiting.wake(c.queue.Add) // a pod waiting for an address held until now
	}
	return nil
}

// enqueueStale queues owners the IPAM or OVN still know but the API no longer has.
func (c *Controller) enqueueStale(ctx context.Context) {
	for _, a := range c.ipam.Allocations() {
		if node, ok := strings.CutPrefix(a.Owner.Pod, nodeOwnerPrefix); ok && a.Subnet == kubeovn.JoinSubnet {
			c.nodeQueue.Add(node)
			continue
		}
		c.queue.Add(a.Owner.Pod)
	}
	ports, err := c.nb.PodPorts(ctx)
	if err != nil {
		c.log.Warn("list pod ports for garbage collection", "err", err)
		return
	}
	for _, p := range ports {
		c.queue.Add(p.Owner)
	}
}

// allocationFailed reports why a pod got no address. A conflict or an exhausted subnet may
// clear up (the holder goes away), so those are retried with backoff; a pin the subnet can
// never satisfy waits for the pod to change.
func (c *Controller) allocationFailed(pod *corev1.Pod, pins annotation.Request, err error) error {
	key := pod.Namespace + "/" + pod.Name
	reason := ReasonAllocationFailed
	switch {
	case errors.Is(err, errPoolExhausted):
		reason = ReasonPoolExhausted
	case errors.Is(err, ipam.ErrConflict):
		reason = ReasonAddressConflict
	}
	c.events.Eventf(pod, corev1.EventTypeWarning, reason, "no address for this pod (%s): %v", pinsText(pins), err)
	if errors.Is(err, ipam.ErrConflict) || errors.Is(err, ipam.ErrExhausted) {
		c.waiting.add(key)
		return fmt.Errorf("allocate address for pod %s: %w", key, err)
	}
	c.log.Warn("pod cannot be allocated until it changes", "pod", pod.Name, "namespace", pod.Namespace, "err", err)
	return nil
}

// awaitsAllocation says whether the pod key is a live pod that still needs its address: its
// sync comes before the re-syncs of pods that hold theirs, of pods gone and of pods edgeovn
// does not wire. It reads the informer's cache only (the pod queue calls it under its lock).
func (c *Controller) awaitsAllocation(key string) bool {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return false
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if err != nil || !podnet.HoldsNetwork(pod) {
		return false
	}
	_, err = annotation.Decode(pod.Annotations)
	return err != nil
}

// enqueueUnallocated queues every pod that wants an address and has none yet: a subnet it may
// be waiting for has appeared.
func (c *Controller) enqueueUnallocated() {
	pods, err := c.pods.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if podnet.HoldsNetwork(p) && p.Annotations[annotation.Allocated] != "true" {
			c.queue.Add(p.Namespace + "/" + p.Name)
		}
	}
}
