package podnet

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
)

// WantsNetwork says whether edgeovn wires this pod at all.
func WantsNetwork(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && !p.Spec.HostNetwork
}

// Completed says the pod's containers have all stopped for good (a finished Job, an evicted
// pod): its sandbox is gone and will not come back, so, as Kube-OVN does, its port is removed
// and its address released though the object stays. Its annotations still name the address;
// they are no longer a claim on it.
func Completed(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// HoldsNetwork says whether the pod has, or should have, an address and a port.
func HoldsNetwork(p *corev1.Pod) bool { return WantsNetwork(p) && !Completed(p) }

// IsPodSubnet says whether a pod may hold an address of the named subnet: any but the join
// network, whose addresses are the nodes' (an annotation claiming one is never adopted).
func IsPodSubnet(name string) bool { return name != kubeovn.JoinSubnet }

// ListSome names up to five items (pod keys, in the messages of Events and conditions),
// sorted.
func ListSome(items []string) string {
	items = slices.Sorted(slices.Values(items))
	if len(items) > 5 {
		return strings.Join(items[:5], ", ") + fmt.Sprintf(" and %d more", len(items)-5)
	}
	return strings.Join(items, ", ")
}
