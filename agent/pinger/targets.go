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

// PodTarget is a sampled pod: its host (name and InternalIP) and its address.
type PodTarget struct {
	Node, NodeIP string
	IP           netip.Addr
}

// NodeTarget is a host's ovn0.
type NodeTarget struct {
	Node string
	IP   netip.Addr
}

// Targets are one round's: the pods and hosts pinged, and this host's labels.
type Targets struct {
	SrcNodeIP string     // this host's InternalIP
	SrcIP     netip.Addr // this host's ovn0 address, where the pings leave from
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
	perNode := map[string][]PodTarget{}
	for _, n := range nodes {
		join := joinIP(n.Annotations)
		if n.Name == req.Self {
			t.SrcNodeIP, t.SrcIP = annotation.NodeInternalIP(&n).String(), join
		}
		if join.IsValid() && len(t.Nodes) < req.MaxTargets {
			t.Nodes = append(t.Nodes, NodeTarget{Node: n.Name, IP: join})
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
			if ps := perNode[n.Name]; i < len(ps) && len(t.Nodes)+len(t.Pods) < req.MaxTargets {
				t.Pods = append(t.Pods, ps[i])
			}
		}
	}
	return t, nil
}

// samplePods keeps up to n of the host's pod-network pods with an IPv4 address, by name.
func samplePods(pods []corev1.Pod, node corev1.Node, n int) []PodTarget {
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	var out []PodTarget
	for _, p := range pods {
		if len(out) == n {
			break
		}
		if p.Spec.HostNetwork || p.DeletionTimestamp != nil {
			continue
		}
		if ip := joinIP(p.Annotations); ip.IsValid() {
			out = append(out, PodTarget{Node: node.Name, NodeIP: annotation.NodeInternalIP(&node).String(), IP: ip})
		}
	}
	return out
}

// joinIP is the IPv4 address of an allocated pod or Node (ovn.kubernetes.io/ip_address).
func joinIP(a map[string]string) netip.Addr {
	n, err := annotation.Decode(a)
	if err != nil {
		return netip.Addr{}
	}
	for _, ip := range n.IPs {
		if ip.Is4() {
			return ip
		}
	}
	return netip.Addr{}
}
