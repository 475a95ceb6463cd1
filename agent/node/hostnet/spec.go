package hostnet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
)

// ErrInvalid means a Spec is incomplete or inconsistent; nothing was changed.
var ErrInvalid = errors.New("invalid host network spec")

// Spec is the host's own port into OVN.
type Spec struct {
	Bridge     string           // "br-int"
	Interface  string           // "ovn0"
	IfaceID    string           // the logical switch port it binds to, "node-<node>"
	MAC        net.HardwareAddr // the join port's MAC
	Address    netip.Prefix     // the node's join address with the join prefix length, 100.64.0.2/16
	Gateway    netip.Addr       // the cluster router on the join switch, 100.64.0.1
	Routes     []netip.Prefix   // routed via Gateway dev Interface: the cluster CIDR(s)
	MTU        int              // 0: leave as is
	Masquerade []netip.Prefix   // pod CIDRs (IPv4, IPv6) masqueraded when leaving by any other interface; empty: no NAT rules
}

// maxIfaceName is IFNAMSIZ-1.
const maxIfaceName = 15

// Validate reports the first thing wrong with the spec, naming the field.
func (s Spec) Validate() error {
	if err := validateName("bridge", s.Bridge); err != nil {
		return err
	}
	if err := validateName("interface", s.Interface); err != nil {
		return err
	}
	if s.IfaceID == "" || strings.ContainsAny(s.IfaceID, " \t\n\"") {
		return invalid("iface-id %q is empty or has whitespace or quotes", s.IfaceID)
	}
	if !ovn.UnicastMAC(s.MAC) {
		// OVN's port security drops frames from any MAC but the port's own.
		return invalid("mac %q is not a unicast ethernet address (the join port's MAC is required)", s.MAC)
	}
	if err := s.validateAddressing(); err != nil {
		return err
	}
	if s.MTU < 0 || s.MTU > 65535 || (s.MTU > 0 && s.MTU < 68) {
		return invalid("mtu %d is outside 68..65535 (0 leaves it)", s.MTU)
	}
	if err := validatePrefixes("routes", s.Routes); err != nil {
		return err
	}
	for _, p := range s.Masquerade {
		if !p.IsValid() || p.Addr().Is4In6() || p != p.Masked() || p.Bits() == 0 {
			return invalid("masquerade: %s is not a network prefix (host bits clear, length > 0)", p)
		}
	}
	return nil
}

func (s Spec) validateAddressing() error {
	a := s.Address
	if !a.IsValid() || !a.Addr().Is4() {
		return invalid("address %s is not an IPv4 address with a prefix length", a)
	}
	if a.Bits() < 31 && a.Addr() == a.Masked().Addr() {
		return invalid("address %s is the network address of its prefix", a)
	}
	if !s.Gateway.IsValid() || !s.Gateway.Is4() {
		return invalid("gateway %s is not an IPv4 address", s.Gateway)
	}
	if !a.Contains(s.Gateway) || s.Gateway == a.Addr() {
		return invalid("gateway %s is not another address in %s", s.Gateway, a.Masked())
	}
	return nil
}

func validatePrefixes(field string, ps []netip.Prefix) error {
	for _, p := range ps {
		if !p.IsValid() || !p.Addr().Is4() || p != p.Masked() || p.Bits() == 0 {
			return invalid("%s: %s is not an IPv4 network prefix (host bits clear, length > 0)", field, p)
		}
	}
	return nil
}

func validateName(field, name string) error {
	if name == "" || len(name) > maxIfaceName || strings.ContainsAny(name, " \t\n/:\"") {
		return invalid("%s name %q is empty, longer than %d bytes, or has whitespace, '/', ':' or quotes",
			field, name, maxIfaceName)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
