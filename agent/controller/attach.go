package controller

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/multus"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Attachment networks (Multus NetworkAttachmentDefinitions of type kube-ovn), as Kube-OVN
// serves them: each gets an address in the Subnet whose spec.provider is the attachment's,
// a port "<pod>.<namespace>.<provider>" and the annotations "<provider>.kubernetes.io/...".
// A pod without k8s.v1.cni.cncf.io/networks costs one map lookup; the NADs are read on
// demand, never watched.

// NADResource is Multus's NetworkAttachmentDefinition; edgeovn reads it and installs nothing.
var NADResource = schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}

// ReasonAttachmentFailed is the Event of a pod whose attachment networks cannot be served.
const ReasonAttachmentFailed = "AttachmentFailed"

// primaryInterface is the IPAM owner interface of a pod's primary network; an attachment's
// owner interface is its provider.
const primaryInterface = "eth0"

func attachOwner(key, provider string) ipam.Owner { return ipam.Owner{Pod: key, Interface: provider} }

// podAttachment is one attachment resolved against the Subnets and the pod's pins.
type podAttachment struct {
	multus.Attachment
	keys   annotation.Keys
	subnet string
	pins   annotation.Request
}

// errAttachmentWaits marks an attachment problem that may clear up by itself (a NAD or a
// Subnet created later): retried with backoff. Others wait for the pod to change.
var errAttachmentWaits = errors.New("retried")

// attachmentsOf resolves the pod's kube-ovn attachments and checks their pins, before
// anything is allocated for the pod; nil for a pod that selects none.
func (c *Controller) attachmentsOf(ctx context.Context, pod *corev1.Pod) ([]podAttachment, error) {
	v := pod.Annotations[multus.NetworksAnnotation]
	if v == "" {
		return nil, nil
	}
	sel, err := multus.ParseSelection(v, pod.Namespace)
	if err != nil {
		return nil, err
	}
	nads, err := c.readNADs(ctx, sel)
	if err != nil {
		return nil, err
	}
	atts, err := multus.Attachments(sel, nads)
	if err != nil {
		if len(nads) < len(sel) {
			err = fmt.Errorf("%w (%w)", err, errAttachmentWaits)
		}
		return nil, err
	}
	out := make([]podAttachment, 0, len(atts))
	for _, a := range atts {
		pa, err := c.resolveAttachment(pod, a)
		if err != nil {
			return nil, err
		}
		out = append(out, pa)
	}
	return out, nil
}

// readNADs reads the selected NADs' configs; a missing one is left out.
func (c *Controller) readNADs(ctx context.Context, sel []multus.Selection) (map[string]multus.NAD, error) {
	nads := map[string]multus.NAD{}
	for _, s := range sel {
		if _, done := nads[s.Key()]; done {
			continue
		}
		u, err := c.req.Dynamic.Resource(NADResource).Namespace(s.Namespace).Get(ctx, s.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read NetworkAttachmentDefinition %s: %w (%w)", s.Key(), err, errAttachmentWaits)
		}
		config, _, _ := unstructuredString(u.Object, "spec", "config")
		nads[s.Key()] = multus.NAD{Config: config}
	}
	return nads, nil
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// resolveAttachment finds the attachment's Subnet (the pod's logical_switch for it, else the
// Subnet of its provider) and its pins (the pod's annotations, else the selection's ips/mac),
// and checks the pinned addresses against the Subnet.
func (c *Controller) resolveAttachment(pod *corev1.Pod, a multus.Attachment) (podAttachment, error) {
	pa := podAttachment{Attachment: a, keys: annotation.KeysFor(a.Provider)}
	pins, err := pa.keys.Requested(pod.Annotations)
	if err != nil {
		return pa, fmt.Errorf("attachment %s: %w", a.Key(), err)
	}
	if len(pins.IPs) == 0 {
		pins.IPs = a.IPs
	}
	if pins.MAC == nil {
		pins.MAC = a.MAC
	}
	pa.pins = pins
	pa.subnet = pins.Switch
	if pa.subnet == "" {
		name, ok := c.subnets.ByProvider(a.SubnetProvider)
		if !ok {
			return pa, fmt.Errorf("attachment %s: no Subnet has provider %s (%w)", a.Key(), a.SubnetProvider, errAttachmentWaits)
		}
		pa.subnet = name
	} else if _, ok := c.subnets.Network(pa.subnet); !ok {
		return pa, fmt.Errorf("attachment %s: %s names Subnet %s, which is not applied (%w)", a.Key(), pa.keys.LogicalSwitch, pa.subnet, errAttachmentWaits)
	}
	if len(pins.IPs) > 0 {
		if err := c.checkPins(attachOwner(pod.Namespace+"/"+pod.Name, a.Provider), pa.subnet, pins.IPs); err != nil {
			return pa, fmt.Errorf("attachment %s: %w", a.Key(), err)
		}
	}
	return pa, nil
}

// attachmentFailed reports why the pod's attachments cannot be served, in an Event and in
// the annotation its node's CNI ADD fails with; retried when it may clear up by itself.
func (c *Controller) attachmentFailed(ctx context.Context, pod *corev1.Pod, err error) error {
	msg := fmt.Sprintf("attachment networks: %v", err)
	c.events.Event(pod, corev1.EventTypeWarning, ReasonAttachmentFailed, msg)
	if nerr := c.noteNetworkError(ctx, pod, msg); nerr != nil {
		return nerr
	}
	if errors.Is(err, errAttachmentWaits) || errors.Is(err, ipam.ErrConflict) || errors.Is(err, ipam.ErrExhausted) {
		return fmt.Errorf("attachments of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c.log.Warn("pod attachments cannot be served until it changes", "pod", pod.Name, "namespace", pod.Namespace, "err", err)
	return nil
}

// syncAttachments resolves and serves the attachments of a pod whose primary network is
// allocated.
func (c *Controller) syncAttachments(ctx context.Context, pod *corev1.Pod) error {
	atts, err := c.attachmentsOf(ctx, pod)
	if err != nil {
		return c.attachmentFailed(ctx, pod, err)
	}
	if err := c.clearNetworkError(ctx, pod); err != nil {
		return err
	}
	return c.ensureAttachments(ctx, pod, atts)
}

// ensureAttachments adopts the attachments the pod's annotations already carry, allocates
// the others, ensures every port, then annotates the new ones in one patch.
func (c *Controller) ensureAttachments(ctx context.Context, pod *corev1.Pod, atts []podAttachment) error {
	key := pod.Namespace + "/" + pod.Name
	patch := map[string]string{}
	for _, a := range atts {
		o := attachOwner(key, a.Provider)
		if _, lost := c.conflicts.Load(o.String()); lost {
			continue
		}
		n, err := a.keys.Decode(pod.Annotations)
		if err == nil {
			if err := c.adoptAttachment(ctx, pod, a, n); err != nil {
				return err
			}
			continue
		}
		alloc, err := c.allocateFor(ctx, pod, a.subnet, o, a.pins)
		if err != nil {
			return c.attachmentFailed(ctx, pod, fmt.Errorf("attachment %s (%s): %w", a.Key(), pinsText(a.pins), err))
		}
		c.subnets.Touched(a.subnet)
		n = c.network(alloc)
		if err := c.ensureAttachmentPort(ctx, pod, a, n); err != nil {
			return err
		}
		maps.Copy(patch, a.keys.Encode(n))
		c.log.Info("pod attachment allocated", "pod", pod.Name, "namespace", pod.Namespace, "provider", a.Provider, "ip", alloc.IPs, "mac", alloc.MAC.String())
	}
	return c.annotate(ctx, pod, patch)
}

// adoptAttachment takes an annotated attachment into the IPAM and OVN, idempotently.
func (c *Controller) adoptAttachment(ctx context.Context, pod *corev1.Pod, a podAttachment, n annotation.Network) error {
	o := attachOwner(pod.Namespace+"/"+pod.Name, a.Provider)
	_, err := c.ipam.Allocate(ctx, ipam.Request{Subnet: n.Switch, Owner: o, IPs: n.IPs, MAC: n.MAC})
	if errors.Is(err, ipam.ErrConflict) {
		c.conflicts.Store(o.String(), true)
		c.events.Eventf(pod, corev1.EventTypeWarning, ReasonAddressConflict, "attachment %s: annotated address %v / MAC %s is held by another pod: %v", a.Key(), n.IPs, n.MAC, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("adopt attachment %s allocation %v of pod %s: %w", a.Provider, n.IPs, o.Pod, err)
	}
	return c.ensureAttachmentPort(ctx, pod, a, n)
}

// ensureAttachmentPort ensures the attachment's OVN port; an IPAM-only attachment (another
// plugin's interface, Kube-OVN as its IPAM) has none, as in Kube-OVN.
func (c *Controller) ensureAttachmentPort(ctx context.Context, pod *corev1.Pod, a podAttachment, n annotation.Network) error {
	if a.IPAMOnly {
		return nil
	}
	provider := a.Provider
	lsp := annotation.AttachmentPortName(pod.Namespace, pod.Name, provider)
	err := c.nb.EnsurePodPort(ctx, northbound.PodPortSpec{Switch: n.Switch, Name: lsp, MAC: n.MAC, IPs: n.IPs,
		Owner: pod.Namespace + "/" + pod.Name, Chassis: pod.Spec.NodeName, StatefulSet: statefulSetMark(pod), Provider: provider})
	if err != nil {
		return fmt.Errorf("ensure port %s: %w", lsp, err)
	}
	return nil
}

// deleteAttachments removes the ports of a gone pod's attachments and notes their addresses
// released (the caller releases the pod's allocations). An IPAM-only attachment has no port:
// its deletion finds none.
func (c *Controller) deleteAttachments(ctx context.Context, ns, name string) error {
	for _, a := range c.ipam.PodAllocations(ns + "/" + name) {
		if a.Owner.Interface == primaryInterface {
			continue
		}
		lsp := annotation.AttachmentPortName(ns, name, a.Owner.Interface)
		if err := c.nb.DeletePodPort(ctx, a.Subnet, lsp); err != nil {
			return fmt.Errorf("delete port %s: %w", lsp, err)
		}
		if err := c.recordReleased(ctx, a.Subnet, a.IPs); err != nil {
			return err
		}
		c.conflicts.Delete(a.Owner.String())
		c.subnets.Touched(a.Subnet)
	}
	return nil
}

// attachmentClaims are the allocations the pod's attachment annotations claim: every
// "<provider>.kubernetes.io/allocated" other than the primary's, whatever NADs exist now.
func attachmentClaims(pod *corev1.Pod) []ipam.Allocation {
	var claims []ipam.Allocation
	key := pod.Namespace + "/" + pod.Name
	for _, p := range annotation.AttachmentProviders(pod.Annotations) {
		n, err := annotation.KeysFor(p).Decode(pod.Annotations)
		if err != nil {
			continue
		}
		claims = append(claims, ipam.Allocation{Subnet: n.Switch, Owner: attachOwner(key, p), IPs: n.IPs, MAC: n.MAC,
			Allocated: pod.CreationTimestamp.Time})
	}
	return claims
}

// portOwner is the IPAM owner of a pod port: the pod's primary interface, or its attachment.
func portOwner(p northbound.PodPort) ipam.Owner {
	if p.Provider != "" {
		return attachOwner(p.Owner, p.Provider)
	}
	return owner(p.Owner)
}
