package northbound

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
)

// LogicalSwitchKey is the external_ids key on pod ports naming their switch, as Kube-OVN does.
const LogicalSwitchKey = "ls"

// StatefulSetKey is the external_ids key on the port of a StatefulSet's pod: "<name>/<uid>" of
// the StatefulSet. The controller keeps such a port, and its address, while the pod is gone
// and its StatefulSet still wants it; being in northbound, the mark survives a restart and a
// change of leader.
const StatefulSetKey = "statefulset"

// RequestedChassisKey is the port option that pins a port to one chassis: ovn-controller
// binds it only there, whatever another host's OVS claims.
const RequestedChassisKey = "requested-chassis"

// PodPortSpec is the desired logical switch port of a pod.
type PodPortSpec struct {
	Switch string           // logical switch, which must exist and be edgeovn's
	Name   string           // "<pod>.<namespace>"
	MAC    net.HardwareAddr // the pod's eth0 MAC
	IPs    []netip.Addr     // one per family
	Owner  string           // "namespace/name"
	// Chassis is the chassis the port binds on: the pod's node (edgeovn names each chassis
	// after its node). Empty: any, as before the pod is scheduled.
	Chassis string
	// StatefulSet is "<name>/<uid>" of the StatefulSet that owns the pod, "" for any other pod.
	StatefulSet string
	// Provider is the attachment's provider ("<nad>.<namespace>.ovn") for the port of a
	// pod's attachment network, "" for its primary interface's.
	Provider string
	// NoPortSecurity leaves the port without port security (the pod may send from, and take
	// packets for, addresses not its own: a gateway pod); edgeovn's default is to set it.
	NoPortSecurity bool
}

// ProviderKey is the external_ids key on the port of a pod's attachment network: its
// provider. A pod's ports are told apart by it (the primary's has none).
const ProviderKey = "provider"

// Validate reports what is wrong with the spec.
func (s PodPortSpec) Validate() error {
	if err := validateName("logical switch", s.Switch); err != nil {
		return err
	}
	if err := validateName("pod port", s.Name); err != nil {
		return err
	}
	if len(s.MAC) != 6 {
		return fmt.Errorf("%w: pod port %s: MAC %q is not a 6-byte Ethernet address", ovn.ErrInvalid, s.Name, s.MAC)
	}
	if s.MAC[0]&1 == 1 {
		return fmt.Errorf("%w: pod port %s: MAC %s is multicast", ovn.ErrInvalid, s.Name, s.MAC)
	}
	if err := validateIPs(s.Name, s.IPs); err != nil {
		return err
	}
	if s.Chassis != "" {
		if err := validateName("chassis", s.Chassis); err != nil {
			return err
		}
	}
	ns, name, ok := strings.Cut(s.Owner, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%w: pod port %s: owner %q is not namespace/name", ovn.ErrInvalid, s.Name, s.Owner)
	}
	if s.StatefulSet != "" {
		if n, uid, ok := strings.Cut(s.StatefulSet, "/"); !ok || n == "" || uid == "" || strings.Contains(uid, "/") {
			return fmt.Errorf("%w: pod port %s: statefulset %q is not name/uid", ovn.ErrInvalid, s.Name, s.StatefulSet)
		}
	}
	return nil
}

func validateIPs(port string, ips []netip.Addr) error {
	if len(ips) == 0 {
		return fmt.Errorf("%w: pod port %s: no IP addresses", ovn.ErrInvalid, port)
	}
	if len(ips) > 2 {
		return fmt.Errorf("%w: pod port %s: %d IP addresses, want one per family", ovn.ErrInvalid, port, len(ips))
	}
	for _, ip := range ips {
		if !ip.IsValid() || ip.IsUnspecified() || ip.Is4In6() {
			return fmt.Errorf("%w: pod port %s: unusable IP address %q", ovn.ErrInvalid, port, ip)
		}
	}
	if len(ips) == 2 && ips[0].Is4() == ips[1].Is4() {
		return fmt.Errorf("%w: pod port %s: two addresses of one family (%s, %s)", ovn.ErrInvalid, port, ips[0], ips[1])
	}
	return nil
}

// addresses is the LSP addresses and port_security entry: "<mac> <ip> [<ip6>]".
func (s PodPortSpec) addresses() string {
	parts := []string{s.MAC.String()}
	for _, ip := range s.IPs {
		parts = append(parts, ip.String())
	}
	return strings.Join(parts, " ")
}

// portSecurity is the port's port_security: its addresses, or none.
func (s PodPortSpec) portSecurity() []string {
	if s.NoPortSecurity {
		return nil
	}
	return []string{s.addresses()}
}

// options are the port's options: the requested chassis, if any.
func (s PodPortSpec) options() map[string]string {
	if s.Chassis == "" {
		return nil
	}
	return map[string]string{RequestedChassisKey: s.Chassis}
}

func (s PodPortSpec) externalIDs() map[string]string {
	ids := ovn.OwnedBy(ovn.KindPod, s.Owner)
	ids[LogicalSwitchKey] = s.Switch
	if s.StatefulSet != "" {
		ids[StatefulSetKey] = s.StatefulSet
	}
	if s.Provider != "" {
		ids[ProviderKey] = s.Provider
	}
	return ids
}

// wantExternalIDs is what a port that has cur must carry: cur's other keys, the spec's, and
// no StatefulSet mark the spec does not have (a pod of that name no longer owned by one).
func (s PodPortSpec) wantExternalIDs(cur map[string]string) map[string]string {
	want := merged(cur, s.externalIDs())
	if s.StatefulSet == "" {
		delete(want, StatefulSetKey)
	}
	return want
}

// parseAddresses reverses addresses; ok is false for anything else ("router", "dynamic").
func parseAddresses(entry string) (net.HardwareAddr, []netip.Addr, bool) {
	fields := strings.Fields(entry)
	if len(fields) < 2 {
		return nil, nil, false
	}
	mac, err := net.ParseMAC(fields[0])
	if err != nil {
		return nil, nil, false
	}
	ips := make([]netip.Addr, 0, len(fields)-1)
	for _, f := range fields[1:] {
		ip, err := netip.ParseAddr(f)
		if err != nil {
			return nil, nil, false
		}
		ips = append(ips, ip)
	}
	return mac, ips, true
}
