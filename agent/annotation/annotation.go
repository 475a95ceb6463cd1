package annotation

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Kube-OVN's pod (and node) annotation keys.
const (
	IPAddress     = "ovn.kubernetes.io/ip_address"
	MACAddress    = "ovn.kubernetes.io/mac_address"
	CIDR          = "ovn.kubernetes.io/cidr"
	Gateway       = "ovn.kubernetes.io/gateway"
	LogicalSwitch = "ovn.kubernetes.io/logical_switch"
	Allocated     = "ovn.kubernetes.io/allocated"
	Routed        = "ovn.kubernetes.io/routed"
	// PortNameKey is on nodes: the node's port on the join switch.
	PortNameKey = "ovn.kubernetes.io/port_name"
	// SecurityGroups names the kubeovn.io SecurityGroups a pod is in: "sg1,sg2".
	SecurityGroups = "ovn.kubernetes.io/security_groups"
	// PortSecurity "false" leaves the pod's port without port security (edgeovn sets it on
	// every other pod; Kube-OVN only where it is "true").
	PortSecurity = "ovn.kubernetes.io/port_security"
)

// ErrNotAllocated means the pod carries no complete allocation yet.
var ErrNotAllocated = errors.New("pod not allocated")

// Network is one pod interface's network as the annotations describe it.
type Network struct {
	Switch   string
	IPs      []netip.Addr
	MAC      net.HardwareAddr
	CIDRs    []netip.Prefix
	Gateways []netip.Addr
}

// Prefixes pairs each address with the length of the CIDR of its family.
func (n Network) Prefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, ip := range n.IPs {
		for _, c := range n.CIDRs {
			if c.Contains(ip) {
				out = append(out, netip.PrefixFrom(ip, c.Bits()))
				break
			}
		}
	}
	return out
}

// Encode renders n as the annotations of an allocated, routed pod.
func Encode(n Network) map[string]string { return ovnKeys.Encode(n) }

// Encode renders n as the annotations of an allocated, routed interface under k.
func (k Keys) Encode(n Network) map[string]string {
	return map[string]string{
		k.IPAddress:     joinStrings(n.IPs),
		k.MACAddress:    n.MAC.String(),
		k.CIDR:          joinStrings(n.CIDRs),
		k.Gateway:       joinStrings(n.Gateways),
		k.LogicalSwitch: n.Switch,
		k.Allocated:     "true",
		k.Routed:        "true",
	}
}

// Decode reads a complete allocation; ErrNotAllocated when allocated/routed are not "true".
func Decode(a map[string]string) (Network, error) { return ovnKeys.Decode(a) }

// Decode reads a complete allocation under k; ErrNotAllocated when allocated/routed are not
// "true".
func (k Keys) Decode(a map[string]string) (Network, error) {
	if a[k.Allocated] != "true" || a[k.Routed] != "true" {
		return Network{}, ErrNotAllocated
	}
	var n Network
	var err error
	n.Switch = a[k.LogicalSwitch]
	if n.Switch == "" {
		return Network{}, fmt.Errorf("annotation %s: empty", k.LogicalSwitch)
	}
	if n.IPs, err = parseList(k.IPAddress, a[k.IPAddress], netip.ParseAddr); err != nil {
		return Network{}, err
	}
	if n.CIDRs, err = parseList(k.CIDR, a[k.CIDR], netip.ParsePrefix); err != nil {
		return Network{}, err
	}
	if n.Gateways, err = parseList(k.Gateway, a[k.Gateway], netip.ParseAddr); err != nil {
		return Network{}, err
	}
	if n.MAC, err = net.ParseMAC(a[k.MACAddress]); err != nil {
		return Network{}, fmt.Errorf("annotation %s %q: %w", k.MACAddress, a[k.MACAddress], err)
	}
	if len(n.Prefixes()) != len(n.IPs) {
		return Network{}, fmt.Errorf("annotation %s %q: address outside %s %q", k.IPAddress, a[k.IPAddress], k.CIDR, a[k.CIDR])
	}
	return n, nil
}

// Request is what a user pinned on a pod before allocation. IPs (ip_address) take precedence
// over Pool (ip_pool), as in Kube-OVN.
type Request struct {
	Switch string
	IPs    []netip.Addr
	MAC    net.HardwareAddr
	Pool   Pool
}

// Requested reads the user's pins; an empty Request when there are none.
func Requested(a map[string]string) (Request, error) { return ovnKeys.Requested(a) }

// Requested reads the user's pins under k; an empty Request when there are none.
func (k Keys) Requested(a map[string]string) (Request, error) {
	var r Request
	var err error
	r.Switch = a[k.LogicalSwitch]
	if v := a[k.IPAddress]; v != "" {
		if r.IPs, err = parseList(k.IPAddress, v, netip.ParseAddr); err != nil {
			return Request{}, err
		}
	}
	if v := a[k.MACAddress]; v != "" {
		if r.MAC, err = net.ParseMAC(v); err != nil {
			return Request{}, fmt.Errorf("annotation %s %q: %w", k.MACAddress, v, err)
		}
	}
	if v := a[k.IPPool]; v != "" {
		if r.Pool, err = ParsePool(v); err != nil {
			return Request{}, err
		}
	}
	return r, nil
}

func parseList[T any](key, v string, parse func(string) (T, error)) ([]T, error) {
	if v == "" {
		return nil, fmt.Errorf("annotation %s: empty", key)
	}
	var out []T
	for _, f := range strings.Split(v, ",") {
		x, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("annotation %s %q: %w", key, v, err)
		}
		out = append(out, x)
	}
	return out, nil
}

func joinStrings[T fmt.Stringer](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

// PortName is the logical switch port of a pod's first interface, Kube-OVN's "<pod>.<namespace>".
func PortName(namespace, name string) string { return name + "." + namespace }
