package kubeovn

import (
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// GatewayCentralized is Kube-OVN's gateway type whose pods leave through chosen hosts.
const GatewayCentralized = "centralized"

// GatewayNode is one host of a centralized Subnet's spec.gatewayNode, in its order: the
// first ready one carries the traffic. IP is the egress address Kube-OVN's "node:ip" form
// names (invalid when not given).
type GatewayNode struct {
	Name string
	IP   netip.Addr
}

// Gateway is a centralized Subnet's choice of gateway hosts: Nodes (gatewayNode, in its
// order) or, when gatewayNode is empty, the Nodes any of Selectors matches
// (gatewayNodeSelectors, as Kube-OVN's getGatewayNodes); ECMP (enableEcmp) uses every ready
// one at once instead of the first.
type Gateway struct {
	Nodes     []GatewayNode
	Selectors []labels.Selector
	ECMP      bool
}

// Centralized: the Subnet has a centralized gateway.
func (g Gateway) Centralized() bool { return len(g.Nodes) > 0 || len(g.Selectors) > 0 }

// ParseGateway reads a Subnet's gatewayNode, gatewayNodeSelectors and enableEcmp. A Subnet
// whose gatewayType is not centralized has no gateway (enableEcmp and the others are then
// unused, as in Kube-OVN); a centralized one needs gatewayNode or gatewayNodeSelectors.
func ParseGateway(spec SubnetSpec) (Gateway, error) {
	if spec.GatewayType != GatewayCentralized {
		return Gateway{}, nil
	}
	g := Gateway{ECMP: spec.EnableEcmp}
	if strings.TrimSpace(spec.GatewayNode) == "" && len(spec.GatewayNodeSelectors) > 0 {
		for i := range spec.GatewayNodeSelectors {
			sel, err := metav1.LabelSelectorAsSelector(&spec.GatewayNodeSelectors[i])
			if err != nil {
				return Gateway{}, fmt.Errorf("%w: gatewayNodeSelectors[%d]: %w", ErrInvalidSpec, i, err)
			}
			g.Selectors = append(g.Selectors, sel)
		}
		return g, nil
	}
	nodes, err := parseGatewayNodes(spec)
	g.Nodes = nodes
	return g, err
}

// parseGatewayNodes reads spec.gatewayNode as Kube-OVN writes it: "node1,node2" or
// "node1:172.18.0.2, node2:172.18.0.3" (spaces allowed); it must name at least one host.
func parseGatewayNodes(spec SubnetSpec) ([]GatewayNode, error) {
	var out []GatewayNode
	seen := map[string]bool{}
	for _, f := range strings.Split(spec.GatewayNode, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		name, ip, hasIP := strings.Cut(f, ":")
		g := GatewayNode{Name: strings.TrimSpace(name)}
		if hasIP {
			a, err := netip.ParseAddr(strings.TrimSpace(ip))
			if err != nil {
				return nil, fmt.Errorf("%w: gatewayNode entry %q: %q is not an address", ErrInvalidSpec, f, ip)
			}
			g.IP = a
		}
		if g.Name == "" || seen[g.Name] {
			return nil, fmt.Errorf("%w: gatewayNode entry %q: empty or repeated node name", ErrInvalidSpec, f)
		}
		seen[g.Name] = true
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: gatewayType centralized needs gatewayNode (the hosts its traffic leaves through, \"node1,node2\") or gatewayNodeSelectors", ErrInvalidSpec)
	}
	return out, nil
}
