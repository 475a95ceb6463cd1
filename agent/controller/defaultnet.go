package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/multus"
)

// ReasonDefaultNetworkUnsupported is the Event of a new pod whose
// v1.multus-cni.io/default-network names a network of another plugin: edgeovn does not serve
// it, and its primary allocation stays on its namespace's Subnet (Multus calls that plugin
// for eth0).
const ReasonDefaultNetworkUnsupported = "DefaultNetworkUnsupported"

// defaultNetworkSubnet is the Subnet of the kube-ovn NetworkAttachmentDefinition the pod's
// v1.multus-cni.io/default-network names (the Subnet whose provider is "<nad>.<ns>.ovn"), as
// Kube-OVN puts the pod's default network there instead of its namespace's Subnet; "" when
// the pod names none, or a network of another plugin (reported in an Event). Multus calls
// edgeovn's plugin for eth0 with that NAD's config: the node serves eth0 as the primary
// network whatever provider the call names (cni/server). A missing NAD, or none of its
// Subnets applied, waits (errAttachmentWaits) with an Event naming the annotation.
func (c *Controller) defaultNetworkSubnet(ctx context.Context, pod *corev1.Pod) (string, error) {
	v := pod.Annotations[multus.DefaultNetworkAnnotation]
	if v == "" {
		return "", nil
	}
	sel, err := multus.ParseSelection(v, pod.Namespace)
	if err == nil && len(sel) != 1 {
		err = fmt.Errorf("names %d networks, want one", len(sel))
	}
	if err != nil {
		return "", fmt.Errorf("%s %q: %w", multus.DefaultNetworkAnnotation, v, err)
	}
	sel[0].Interface = "eth0"
	nads, err := c.readNADs(ctx, sel)
	if err != nil {
		return "", err
	}
	if _, ok := nads[sel[0].Key()]; !ok {
		return "", fmt.Errorf("%s: NetworkAttachmentDefinition %s not found (%w)", multus.DefaultNetworkAnnotation, sel[0].Key(), errAttachmentWaits)
	}
	atts, err := multus.Attachments(sel, nads)
	if err != nil {
		return "", fmt.Errorf("%s: %w", multus.DefaultNetworkAnnotation, err)
	}
	if len(atts) == 0 {
		c.events.Eventf(pod, corev1.EventTypeWarning, ReasonDefaultNetworkUnsupported,
			"%s %q is not a kube-ovn network: edgeovn does not serve it; the pod's edgeovn address is on its namespace's Subnet (Multus calls that network's plugin for eth0)", multus.DefaultNetworkAnnotation, v)
		return "", nil
	}
	name, ok := c.subnets.ByProvider(atts[0].SubnetProvider)
	if !ok {
		return "", fmt.Errorf("%s %s: no Subnet has provider %s (%w)", multus.DefaultNetworkAnnotation, sel[0].Key(), atts[0].SubnetProvider, errAttachmentWaits)
	}
	return name, nil
}
