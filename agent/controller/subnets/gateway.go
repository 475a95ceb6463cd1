package subnets

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

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

// checkGateway refuses a centralized Subnet whose gatewayNode or gatewayNodeSelectors do not
// parse, whose gatewayNode names no Node at all, and one that is not an overlay Subnet of the
// cluster router. Selectors that match no Node yet are not refused: labels come and go, and
// the Subnet is looked at again when a Node's change.
func (s *Controller) checkGateway(sn *kubeovn.Subnet) *refusal {
	gw, err := kubeovn.ParseGateway(sn.Spec)
	if err != nil {
		return &refusal{ReasonInvalidSpec, err}
	}
	if !gw.Centralized() {
		return nil
	}
	if sn.Spec.Vlan != "" || customVpc(sn.Spec) {
		return &refusal{ReasonInvalidSpec, fmt.Errorf("%w: gatewayType centralized is for overlay Subnets of the cluster router (not with vlan or a custom vpc)", kubeovn.ErrInvalidSpec)}
	}
	if s.req.Nodes == nil || len(gw.Nodes) == 0 {
		return nil
	}
	for _, g := range gw.Nodes {
		if _, err := s.req.Nodes.Get(g.Name); err == nil || !apierrors.IsNotFound(err) {
			return nil
		}
	}
	return &refusal{ReasonInvalidSpec, fmt.Errorf("%w: gatewayNode %q names no node of the cluster", kubeovn.ErrInvalidSpec, sn.Spec.GatewayNode)}
}

// gateway makes the Subnet's centralized gateway policies: one per family, rerouting its
// pods' outside traffic to the join address of the first gateway host that is Ready and has
// one, as Kube-OVN's primary-backup mode (the next one takes over when it is not), or with
// enableEcmp to every such host's at once (one policy with several next hops: OVN spreads the
// flows over them, as Kube-OVN's ECMP mode). With no such host, or a distributed Subnet, there
// is none and the pods leave through their own hosts. It returns the gateway hosts in use,
// comma-separated ("" when none).
func (s *Controller) gateway(ctx context.Context, sn *kubeovn.Subnet, net kubeovn.Network) (string, error) {
	gw, err := kubeovn.ParseGateway(sn.Spec)
	if err != nil {
		return "", err
	}
	owner := northbound.OwnerRef{Kind: ovn.KindSubnet, Name: sn.Name}
	active, hops := s.activeGateways(gw)
	var specs []northbound.RouterPolicySpec
	for _, p := range net.CIDRs {
		var family []netip.Addr
		for _, hop := range hops {
			if hop.Is4() == p.Addr().Is4() {
				family = append(family, hop)
			}
		}
		if len(family) == 0 {
			continue
		}
		field := "ip4.src == "
		if p.Addr().Is6() {
			field = "ip6.src == "
		}
		specs = append(specs, northbound.RouterPolicySpec{Router: s.req.Router, Priority: CentralizedGatewayPriority,
			Match: field + p.String(), Action: nbdb.LogicalRouterPolicyActionReroute, NextHops: family, Owner: owner})
	}
	wrote, err := s.req.NB.EnsureOwnedPolicies(ctx, s.req.Router, owner, CentralizedGatewayPriority, specs)
	if wrote {
		s.log.Info("subnet gateway applied", "subnet", sn.Name, "gatewayType", sn.Spec.GatewayType, "activeGateway", active, "ecmp", gw.ECMP)
	}
	if err == nil && gw.Centralized() && active == "" {
		s.log.Warn("centralized subnet has no ready gateway host: its pods leave through their own hosts", "subnet", sn.Name, "gatewayNode", sn.Spec.GatewayNode)
	}
	return active, err
}

// activeGateways are the gateway hosts in use and their join addresses: the first of the
// candidates that is a Ready Node with a join address, or, with ECMP, every one.
func (s *Controller) activeGateways(gw kubeovn.Gateway) (string, []netip.Addr) {
	if s.req.Nodes == nil {
		return "", nil
	}
	var names []string
	var hops []netip.Addr
	for _, name := range s.candidates(gw) {
		node, err := s.req.Nodes.Get(name)
		if err != nil || !nodeReady(node) {
			continue
		}
		n, err := annotation.Decode(node.Annotations)
		if err != nil || n.Switch != kubeovn.JoinSubnet || len(n.IPs) == 0 {
			continue
		}
		names, hops = append(names, name), append(hops, n.IPs...)
		if !gw.ECMP {
			break
		}
	}
	return strings.Join(names, ","), hops
}

// candidates are the gateway hosts' names: gatewayNode's in its order, or the Nodes the
// selectors match, by name.
func (s *Controller) candidates(gw kubeovn.Gateway) []string {
	var out []string
	for _, g := range gw.Nodes {
		out = append(out, g.Name)
	}
	if len(gw.Selectors) == 0 {
		return out
	}
	seen := map[string]bool{}
	for _, sel := range gw.Selectors {
		nodes, err := s.req.Nodes.List(sel)
		if err != nil {
			continue
		}
		for _, n := range nodes {
			seen[n.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// GatewayChanged: what chooses a centralized Subnet's gateway hosts changed between the two
// (the Node's readiness, its join address, its labels for gatewayNodeSelectors).
func GatewayChanged(a, b *corev1.Node) bool {
	return nodeReady(a) != nodeReady(b) || a.Annotations[annotation.IPAddress] != b.Annotations[annotation.IPAddress] ||
		!maps.Equal(a.Labels, b.Labels)
}
