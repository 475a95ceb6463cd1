package kubeovn

import (
	"fmt"
	"net/netip"
	"strings"
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

// ParseGatewayNodes reads spec.gatewayNode as Kube-OVN writes it: "node1,node2" or
// "node1:172.18.0.2, node2:172.18.0.3" (spaces allowed). A Subnet whose gatewayType is not
// centralized has none; a centralized one must name at least one host.
func ParseGatewayNodes(spec SubnetSpec) ([]GatewayNode, error) {
	if spec.GatewayType != GatewayCentralized {
		return nil, nil
	}
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
		return nil, fmt.Errorf("%w: gatewayType centralized needs gatewayNode (the hosts its traffic leaves through, \"node1,node2\")", ErrInvalidSpec)
	}
	return out, nil
}
