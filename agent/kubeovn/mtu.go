package kubeovn

import (
	"fmt"
	"net/netip"
)

// MTU bounds of a pod interface: the kernel's minimum for an Ethernet device (and IPv4's),
// its largest (a veth's maximum), and IPv6's minimum (RFC 8200), below which Kube-OVN refuses
// a Subnet with IPv6: Linux drops IPv6 on such an interface without a word.
const (
	MinMTU     = 68
	MaxMTU     = 65535
	IPv6MinMTU = 1280
)

// CheckMTU refuses a spec.mtu a pod interface cannot have: outside MinMTU-MaxMTU, or below
// IPv6MinMTU on a Subnet with an IPv6 CIDR (Kube-OVN's ValidateSubnet rule). 0 is unset: the
// node's --mtu.
func CheckMTU(spec SubnetSpec, cidrs []netip.Prefix) error {
	m := spec.Mtu
	if m == 0 {
		return nil
	}
	if m < MinMTU || m > MaxMTU {
		return fmt.Errorf("%w: mtu %d is outside %d-%d", ErrInvalidSpec, m, MinMTU, MaxMTU)
	}
	for _, p := range cidrs {
		if p.Addr().Is6() && m < IPv6MinMTU {
			return fmt.Errorf("%w: mtu %d is below the IPv6 minimum %d (cidrBlock %s): IPv6 would be dropped on the pods' interfaces", ErrInvalidSpec, m, IPv6MinMTU, p)
		}
	}
	return nil
}

// CheckRouteTable refuses a spec.routeTable that is no route table's name (ValidateRouteTable)
// or is set on an underlay Subnet without u2oInterconnection, which has no router port.
func CheckRouteTable(spec SubnetSpec) error {
	if err := ValidateRouteTable(spec.RouteTable); err != nil {
		return fmt.Errorf("%w: routeTable: %w", ErrInvalidSpec, err)
	}
	if spec.RouteTable != "" && spec.Vlan != "" && !spec.U2OInterconnection {
		return fmt.Errorf("%w: routeTable %q on an underlay Subnet without u2oInterconnection: it has no router port to bind", ErrInvalidSpec, spec.RouteTable)
	}
	return nil
}
