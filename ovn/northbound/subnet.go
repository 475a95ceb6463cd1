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
	CIDR    netip.Prefix // the Subnet's cidrBlock
	Gateway netip.Addr   // the router's address on the switch
}

// Validate reports what is wrong with the spec.
func (s SubnetSpec) Validate() error {
	if err := validateName("subnet", s.Name); err != nil {
		return err
	}
	if err := validateName("router", s.Router); err != nil {
		return err
	}
	return validateNetwork("subnet "+s.Name, s.CIDR, s.Gateway)
}

func (s SubnetSpec) attachment() attachment {
	return attachment{
		Router:  s.Router,
		Switch:  s.Name,
		CIDR:    s.CIDR,
		Gateway: s.Gateway,
		Owner:   ovn.OwnedBy(ovn.KindSubnet, s.Name),
	}
}

// EnsureSubnet creates or repairs the switch spec.Name (other_config subnet), the router port
// "<router>-<name>" at the gateway with a MAC derived from it, and the switch port
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
