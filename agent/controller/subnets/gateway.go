package subnets

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// CentralizedGatewayPriority is the router policy of a centralized Subnet: its pods' traffic
// for the outside goes to the active gateway host's join address. Kube-OVN puts it at 29000
// and takes the Subnet's pods out of the hosts' address sets; edgeovn puts it just above the
// distributed gateway's per-host policies (NodeGatewayPriority), which then need no change.
// Traffic to the cluster's own networks is allowed at 31000 before either.
const CentralizedGatewayPriority = northbound.NodeGatewayPriority + 50

// checkGateway refuses a centralized Subnet whose gatewayNode does not parse or names no
// Node at all, and one that is not an overlay Subnet of the cluster router.
func (s *Controller) checkGateway(sn *kubeovn.Subnet) *refusal {
	gws, err := kubeovn.ParseGatewayNodes(sn.Spec)
	if err != nil {
		return &refusal{ReasonInvalidSpec, err}
	}
	if len(gws) == 0 {
		return nil
	}
	if sn.Spec.Vlan != "" || customVpc(sn.Spec) {
		return &refusal{ReasonInvalidSpec, fmt.Errorf("%w: gatewayType centralized is for overlay Subnets of the cluster router (not with vlan or a custom vpc)", kubeovn.ErrInvalidSpec)}
	}
	if s.req.Nodes == nil {
		return nil
	}
	for _, g := range gws {
		if _, err := s.req.Nodes.Get(g.Name); err == nil || !apierrors.IsNotFound(err) {
			return nil
		}
	}
	return &refusal{ReasonInvalidSpec, fmt.Errorf("%w: gatewayNode %q names no node of the cluster", kubeovn.ErrInvalidSpec, sn.Spec.GatewayNode)}
}

// gateway makes the Subnet's centralized gateway policies: one per family, rerouting its
// pods' outside traffic to the join address of the first host of gatewayNode that is Ready
// and has one, as Kube-OVN's primary-backup mode; the next one takes over when it is not.
// With no such host, or a distributed Subnet, there is none and the pods leave through their
// own hosts. It returns the active gateway ("" when none).
func (s *Controller) gateway(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network) (string, error) {
	gws, err := kubeovn.ParseGatewayNodes(sn.Spec)
	if err != nil {
		return "", err
	}
	owner := northbound.OwnerRef{Kind: ovn.KindSubnet, Name: sn.Name}
	active, hops := s.activeGateway(gws)
	var specs []northbound.RouterPolicySpec
	for _, p := range net.CIDRs {
		for _, hop := range hops {
			if hop.Is4() != p.Addr().Is4() {
				continue
			}
			field := "ip4.src == "
			if p.Addr().Is6() {
				field = "ip6.src == "
			}
			specs = append(specs, northbound.RouterPolicySpec{Router: s.req.Router, Priority: CentralizedGatewayPriority,
				Match: field + p.String(), Action: nbdb.LogicalRouterPolicyActionReroute, NextHops: []netip.Addr{hop}, Owner: owner})
		}
	}
	wrote, err := s.req.NB.EnsureOwnedPolicies(ctx, s.req.Router, owner, CentralizedGatewayPriority, specs)
	if wrote {
		s.log.Info("subnet gateway applied", "subnet", sn.Name, "gatewayType", sn.Spec.GatewayType, "activeGateway", active)
	}
	if err == nil && len(gws) > 0 && active == "" {
		s.log.Warn("centralized subnet has no ready gateway host: its pods leave through their own hosts", "subnet", sn.Name, "gatewayNode", sn.Spec.GatewayNode)
	}
	return active, err
}

// activeGateway is the first of gws that is a Ready Node with a join address, and those
// addresses.
func (s *Controller) activeGateway(gws []kubeovn.GatewayNode) (string, []netip.Addr) {
	if s.req.Nodes == nil {
		return "", nil
	}
	for _, g := range gws {
		node, err := s.req.Nodes.Get(g.Name)
		if err != nil || !nodeReady(node) {
			continue
		}
		n, err := annotation.Decode(node.Annotations)
		if err != nil || n.Switch != kubeovn.JoinSubnet || len(n.IPs) == 0 {
			continue
		}
		return g.Name, slices.Clone(n.IPs)
	}
	return "", nil
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// GatewayChanged: what chooses a centralized Subnet's active gateway changed between the two
// (the Node's readiness, its join address).
func GatewayChanged(a, b *corev1.Node) bool {
	return nodeReady(a) != nodeReady(b) || a.Annotations[annotation.IPAddress] != b.Annotations[annotation.IPAddress]
}
