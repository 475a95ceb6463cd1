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
	JoinCIDR    netip.Prefix // 100.64.0.0/16
	JoinGateway netip.Addr   // router address on the join switch, 100.64.0.1
}

// Validate reports what is wrong with the spec.
func (s ClusterSpec) Validate() error {
	if err := validateName("router", s.Router); err != nil {
		return err
	}
	if err := validateName("join switch", s.JoinSwitch); err != nil {
		return err
	}
	return validateNetwork("join switch "+s.JoinSwitch, s.JoinCIDR, s.JoinGateway)
}

func (s ClusterSpec) attachment() attachment {
	return attachment{
		Router:       s.Router,
		Switch:       s.JoinSwitch,
		CIDRs:        []netip.Prefix{s.JoinCIDR},
		Gateways:     []netip.Addr{s.JoinGateway},
		Owner:        ovn.OwnedBy(ovn.KindCluster, s.Router),
		CreateRouter: true,
	}
}

// EnsureCluster creates or repairs the cluster router, the join switch, the router port
// "<router>-<join>" at JoinGateway and the switch port "<join>-<router>" that links them.
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
