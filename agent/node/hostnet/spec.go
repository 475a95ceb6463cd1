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
	Address    netip.Prefix     // the node's IPv4 join address with the join prefix length, 100.64.0.2/16; invalid: IPv6 only
	Gateway    netip.Addr       // the cluster router on the join switch, 100.64.0.1
	Address6   netip.Prefix     // the node's IPv6 join address, fd00:100:64::2/112; invalid: IPv4 only
	Gateway6   netip.Addr       // the cluster router's IPv6 address on the join switch, fd00:100:64::1
	Routes     []netip.Prefix   // routed via the family's gateway dev Interface: the cluster CIDR(s)
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
	if err := s.validateRoutes(); err != nil {
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
	if !s.Address.IsValid() && !s.Address6.IsValid() {
		return invalid("address: neither an IPv4 nor an IPv6 join address")
	}
	if s.Address.IsValid() || s.Gateway.IsValid() {
		if err := checkFamily("address", "gateway", s.Address, s.Gateway, true); err != nil {
			return err
		}
	}
	if s.Address6.IsValid() || s.Gateway6.IsValid() {
		return checkFamily("address6", "gateway6", s.Address6, s.Gateway6, false)
	}
	return nil
}

// checkFamily checks one family's join address and gateway.
func checkFamily(addrField, gwField string, a netip.Prefix, gw netip.Addr, v4 bool) error {
	fam := map[bool]string{true: "IPv4", false: "IPv6"}[v4]
	if !a.IsValid() || a.Addr().Is4() != v4 || a.Addr().Is4In6() {
		return invalid("%s %s is not an %s address with a prefix length", addrField, a, fam)
	}
	if a.Bits() < a.Addr().BitLen()-1 && a.Addr() == a.Masked().Addr() {
		return invalid("%s %s is the network address of its prefix", addrField, a)
	}
	if !gw.IsValid() || gw.Is4() != v4 {
		return invalid("%s %s is not an %s address", gwField, gw, fam)
	}
	if !a.Contains(gw) || gw == a.Addr() {
		return invalid("%s %s is not another address in %s", gwField, gw, a.Masked())
	}
	return nil
}

// gatewayFor is the join gateway and address of p's family.
func (s Spec) gatewayFor(p netip.Prefix) (netip.Addr, netip.Prefix) {
	if p.Addr().Is4() {
		return s.Gateway, s.Address
	}
	return s.Gateway6, s.Address6
}

func (s Spec) validateRoutes() error {
	for _, p := range s.Routes {
		if !p.IsValid() || p.Addr().Is4In6() || p != p.Masked() || p.Bits() == 0 {
			return invalid("routes: %s is not a network prefix (host bits clear, length > 0)", p)
		}
		if _, a := s.gatewayFor(p); !a.IsValid() {
			return invalid("routes: %s has no join address of its family", p)
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
