package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// restorePorts re-creates, in one northbound transaction, the primary ports of the annotated
// live pods that northbound lacks: a database restored from a backup, or created anew after a
// power cut corrupted its file, has lost them, and each pod's own sync would otherwise write
// them one transaction (and one ovn-northd recompute) at a time. It runs after the IPAM's
// reconcile, so every address it writes is its pod's; a pod whose claim lost is left out. A
// batch that fails (a Subnet's switch not there) is logged and left to the pods' own syncs,
// which write and report each port on its own.
func (c *Controller) restorePorts(ctx context.Context, byOwner map[string]*corev1.Pod, ports []northbound.PodPort) {
	have := make(map[string]bool, len(ports))
	for _, p := range ports {
		if p.Provider == "" {
			have[p.Owner] = true
		}
	}
	var specs []northbound.PodPortSpec
	for key, pod := range byOwner {
		if _, lost := c.conflicts.Load(key); lost || have[key] {
			continue
		}
		if n, err := annotation.Decode(pod.Annotations); err == nil {
			specs = append(specs, portSpec(pod, n))
		}
	}
	if len(specs) == 0 {
		return
	}
	if err := c.nb.EnsurePodPorts(ctx, specs); err != nil {
		c.log.Warn("could not restore the pods' missing northbound ports at once: each pod's sync writes its own", "ports", len(specs), "err", err)
		return
	}
	c.log.Info("restored the pods' ports northbound had lost", "ports", len(specs))
}
