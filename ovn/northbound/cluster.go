package northbound

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/edgeovn/edgeovn/ovn"
)

// ClusterSpec is the cluster-wide topology: the router every subnet attaches to and the join
// switch that connects the hosts (ovn0) to it.
type ClusterSpec struct {
	Router      string       // logical router, "ovn-cluster"
	JoinSwitch  string       // join logical switch, "join"
	JoinCIDR    netip.Prefix // 100.64.0.0/16 (in an IPv6-only cluster, the IPv6 one)
	JoinGateway netip.Addr   // router address on the join switch, 100.64.0.1
	// JoinDualCIDR and JoinDualGateway are the join network's IPv6 half in a dual-stack
	// cluster (fd00:100:64::/112, fd00:100:64::1); zero values: single stack.
	JoinDualCIDR    netip.Prefix
	JoinDualGateway netip.Addr
}

// Validate reports what is wrong with the spec.
func (s ClusterSpec) Validate() error {
	if err := validateName("router", s.Router); err != nil {
		return err
	}
	if err := validateName("join switch", s.JoinSwitch); err != nil {
		return err
	}
	if err := validateNetwork("join switch "+s.JoinSwitch, s.JoinCIDR, s.JoinGateway); err != nil {
		return err
	}
	if !s.JoinDualCIDR.IsValid() && !s.JoinDualGateway.IsValid() {
		return nil
	}
	if err := validateNetwork("join switch "+s.JoinSwitch+" (second family)", s.JoinDualCIDR, s.JoinDualGateway); err != nil {
		return err
	}
	if s.JoinDualCIDR.Addr().Is4() == s.JoinCIDR.Addr().Is4() {
		return fmt.Errorf("%w: join switch %s: CIDRs %s and %s are of one family", ovn.ErrInvalid, s.JoinSwitch, s.JoinCIDR, s.JoinDualCIDR)
	}
	return nil
}

func (s ClusterSpec) attachment() attachment {
	cidrs, gws := []netip.Prefix{s.JoinCIDR}, []netip.Addr{s.JoinGateway}
	if s.JoinDualCIDR.IsValid() {
		cidrs, gws = append(cidrs, s.JoinDualCIDR), append(gws, s.JoinDualGateway)
	}
	return attachment{
		Router:       s.Router,
		Switch:       s.JoinSwitch,
		CIDRs:        cidrs,
		Gateways:     gws,
		Owner:        ovn.OwnedBy(ovn.KindCluster, s.Router),
		CreateRouter: true,
	}
}

// EnsureCluster creates or repairs the cluster router, the join switch, the router port
// "<router>-<join>" at JoinGateway (and JoinDualGateway) and the switch port "<join>-<router>" that links them.
// Rows already right are left alone; if all are, nothing is written.
func (c *Client) EnsureCluster(ctx context.Context, spec ClusterSpec) error {
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("ensure cluster: %w", err)
	}
	if err := c.ensureAttachment(ctx, spec.attachment()); err != nil {
		return fmt.Errorf("ensure cluster router %s with join switch %s: %w", spec.Router, spec.JoinSwitch, err)
	}
	return nil
}
