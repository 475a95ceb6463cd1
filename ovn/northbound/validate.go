package northbound

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/ipam/netfamily"
	"github.com/edgeovn/edgeovn/ovn"
)

// validateName rejects names that OVN would accept but that break edgeovn's derived names
// ("<router>-<switch>") and ovn-nbctl output.
func validateName(what, name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty %s name", ovn.ErrInvalid, what)
	}
	if strings.ContainsAny(name, " \t\n\"") {
		return fmt.Errorf("%w: %s name %q contains whitespace or quotes", ovn.ErrInvalid, what, name)
	}
	return nil
}

// validateNetwork checks that cidr is a network prefix and gw a usable address inside it
// (ipam/netfamily, the one gateway check).
func validateNetwork(what string, cidr netip.Prefix, gw netip.Addr) error {
	if !cidr.IsValid() {
		return fmt.Errorf("%w: %s: missing or invalid CIDR", ovn.ErrInvalid, what)
	}
	if cidr != cidr.Masked() {
		return fmt.Errorf("%w: %s: CIDR %s has host bits set (network is %s)", ovn.ErrInvalid, what, cidr, cidr.Masked())
	}
	if err := netfamily.CheckGateway("gateway", "CIDR", cidr, gw); err != nil {
		return fmt.Errorf("%w: %s: %w", ovn.ErrInvalid, what, err)
	}
	return nil
}
