package pinger

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeapi"
)

// PodTarget is one address of a sampled pod (a dual-stack pod is two targets) and its host
// (name and InternalIP).
type PodTarget struct {
	Node, NodeIP string
	IP           netip.Addr
}

// NodeTarget is one of a host's ovn0 addresses (one target per family).
type NodeTarget struct {
	Node string
	IP   netip.Addr
}

// Targets are one round's: the pods and hosts pinged, and this host's labels.
type Targets struct {
	SrcNodeIP string       // this host's InternalIP
	SrcIPs    []netip.Addr // this host's ovn0 addresses, where the pings leave from
	Nodes     []NodeTarget
	Pods      []PodTarget
}

// Lister lists the cluster's Nodes and a host's pods (kubeapi.Client does).
type Lister interface {
	ListNodes(ctx context.Context) ([]corev1.Node, error)
	// ListPods returns at most limit pods of node (fewer is fine: a sample).
	ListPods(ctx context.Context, node string, limit int) ([]corev1.Pod, error)
}

// KubeLister lists through the API server: all Nodes, and per host one page of its pods
// (field selector spec.nodeName, a limit), never the cluster's whole pod list.
type KubeLister struct{ Kube *kubeapi.Client }

var _ Lister = KubeLister{}

func (k KubeLister) ListNodes(ctx context.Context) ([]corev1.Node, error) {
	l, err := k.Kube.Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return l.Items, nil
}

func (k KubeLister) ListPods(ctx context.Context, node string, limit int) ([]corev1.Pod, error) {
	l, err := k.Kube.Pods("").List(ctx, metav1.ListOptions{Limit: int64(limit),
		FieldSelector: fields.AndSelectors(fields.OneTermEqualSelector("spec.nodeName", node),
			fields.OneTermEqualSelector("status.phase", string(corev1.PodRunning))).String()})
	if err != nil {
		return nil, fmt.Errorf("list pods of node %s: %w", node, err)
	}
	return l.Items, nil
}

// pickRequest is how listTargets samples.
type pickRequest struct {
	Self        string
	PodsPerNode int
	MaxTargets  int
}

// listTargets samples the round's targets: every host's ovn0 (this one's too: it checks the
// host's own path into OVN), then up to PodsPerNode pods per host in name order, within
// MaxTargets in all (hosts first, then pods host by host in turn).
func listTargets(ctx context.Context, l Lister, req pickRequest) (Targets, error) {
	nodes, err := l.ListNodes(ctx)
	if err != nil {
		return Targets{}, err
	}
	slices.SortFunc(nodes, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	var t Targets
	perNode := map[string][][]PodTarget{} // per host, per sampled pod: a target per address
	for _, n := range nodes {
		joins := podIPs(n.Annotations)
		if n.Name == req.Self {
			t.SrcNodeIP, t.SrcIPs = annotation.NodeInternalIP(&n).String(), joins
		}
		for _, ip := range joins {
			if len(t.Nodes) < req.MaxTargets {
				t.Nodes = append(t.Nodes, NodeTarget{Node: n.Name, IP: ip})
			}
		}
		if req.PodsPerNode == 0 {
			continue
		}
		// A few more than wanted: some may be host-network pods or not allocated yet.
		pods, err := l.ListPods(ctx, n.Name, 2*req.PodsPerNode+2)
		if err != nil {
			return t, err
		}
		perNode[n.Name] = samplePods(pods, n, req.PodsPerNode)
	}
	for i := 0; i < req.PodsPerNode; i++ {
		for _, n := range nodes {
			if ps := perNode[n.Name]; i < len(ps) && len(t.Nodes)+len(t.Pods)+len(ps[i]) <= req.MaxTargets {
				t.Pods = append(t.Pods, ps[i]...)
			}
		}
	}
	return t, nil
}

// samplePods keeps up to n of the host's allocated pod-network pods, by name: per pod, a
// target per address (both families of a dual-stack pod, as Kube-OVN's pinger pings each of a
// pod's IPs).
func samplePods(pods []corev1.Pod, node corev1.Node, n int) [][]PodTarget {
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var out [][]PodTarget
	for _, p := range pods {
		if len(out) == n {
			break
		}
		if p.Spec.HostNetwork || p.DeletionTimestamp != nil {
			continue
		}
		var targets []PodTarget
		for _, ip := range podIPs(p.Annotations) {
			targets = append(targets, PodTarget{Node: node.Name, NodeIP: annotation.NodeInternalIP(&node).String(), IP: ip})
		}
		if len(targets) > 0 {
			out = append(out, targets)
		}
	}
	return out
}

// podIPs are the addresses of an allocated pod, or of a Node's ovn0
// (ovn.kubernetes.io/ip_address), IPv4 first.
func podIPs(a map[string]string) []netip.Addr {
	n, err := annotation.Decode(a)
	if err != nil {
		return nil
	}
	ips := slices.Clone(n.IPs)
	slices.SortStableFunc(ips, func(a, b netip.Addr) int {
		if a.Is4() == b.Is4() {
			return 0
		}
		if a.Is4() {
			return -1
		}
		return 1
	})
	return ips
}

// srcIP is the ovn0 address of target's family (the src_pod_ip label); invalid without one.
func (t Targets) srcIP(target netip.Addr) netip.Addr {
	for _, a := range t.SrcIPs {
		if a.Is4() == target.Unmap().Is4() {
			return a
		}
	}
	return netip.Addr{}
}
