package northbound

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/edgeovn/edgeovn/ovn"
)

// SubnetSpec is one Subnet's logical switch and its attachment to the cluster router.
type SubnetSpec struct {
	Name    string       // logical switch, the Subnet's name ("ovn-default")
	Router  string       // cluster router, which must exist (EnsureCluster)
	CIDR    netip.Prefix // the Subnet's cidrBlock (its first family)
	Gateway netip.Addr   // the router's address on the switch
	// DualCIDR and DualGateway are the other family of a dual-stack Subnet ("10.16.0.0/16,
	// fd00:10:16::/64"); zero values: single stack.
	DualCIDR    netip.Prefix
	DualGateway netip.Addr
	// RouteTable binds the router port to that route table (options:route_table, Kube-OVN's
	// Subnet spec.routeTable): traffic from the Subnet is routed by that table's routes and the
	// main table's. "" is the main table only.
	RouteTable string
}

// Validate reports what is wrong with the spec.
func (s SubnetSpec) Validate() error {
	if err := validateName("subnet", s.Name); err != nil {
		return err
	}
	if err := validateName("router", s.Router); err != nil {
		return err
	}
	if err := validateNetwork("subnet "+s.Name, s.CIDR, s.Gateway); err != nil {
		return err
	}
	if err := ValidateRouteTable(s.RouteTable); err != nil {
		return fmt.Errorf("subnet %s: %w", s.Name, err)
	}
	if !s.DualCIDR.IsValid() && !s.DualGateway.IsValid() {
		return nil
	}
	if err := validateNetwork("subnet "+s.Name+" (second family)", s.DualCIDR, s.DualGateway); err != nil {
		return err
	}
	if s.DualCIDR.Addr().Is4() == s.CIDR.Addr().Is4() {
		return fmt.Errorf("%w: subnet %s: CIDRs %s and %s are of one family", ovn.ErrInvalid, s.Name, s.CIDR, s.DualCIDR)
	}
	return nil
}

func (s SubnetSpec) networks() ([]netip.Prefix, []netip.Addr) {
	if !s.DualCIDR.IsValid() {
		return []netip.Prefix{s.CIDR}, []netip.Addr{s.Gateway}
	}
	return []netip.Prefix{s.CIDR, s.DualCIDR}, []netip.Addr{s.Gateway, s.DualGateway}
}

func (s SubnetSpec) attachment() attachment {
	cidrs, gws := s.networks()
	return attachment{
		Router:     s.Router,
		Switch:     s.Name,
		CIDRs:      cidrs,
		Gateways:   gws,
		Owner:      ovn.OwnedBy(ovn.KindSubnet, s.Name),
		RouteTable: s.RouteTable,
	}
}

// EnsureSubnet creates or repairs the switch spec.Name (other_config subnet, ipv6_prefix for
// IPv6), the router port "<router>-<name>" at the gateway(s) with a MAC derived from the first,
// and the switch port
// "<name>-<router>". The router must already exist (ovn.ErrNotFound otherwise). If everything
// is already right, nothing is written.
func (c *Client) EnsureSubnet(ctx context.Context, spec SubnetSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("ensure subnet: %w", err)
	}
	if err := c.ensureAttachment(ctx, spec.attachment()); err != nil {
		return fmt.Errorf("ensure subnet %s on router %s: %w", spec.Name, spec.Router, err)
	}
	return nil
}
