package ipam

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Owner is who holds an allocation: one interface of one pod. A pod with several interfaces
// has one owner (and one allocation) per interface.
type Owner struct {
	Pod       string `json:"pod"`       // "namespace/name"
	Interface string `json:"interface"` // "eth0"
}

func (o Owner) String() string { return o.Pod + "@" + o.Interface }

func (o Owner) validate() error {
	if o.Pod == "" || o.Interface == "" {
		return fmt.Errorf("owner %q: pod and interface must both be set: %w", o.String(), ErrInvalid)
	}
	return nil
}

// Range is an inclusive address range of one family.
type Range struct {
	First netip.Addr `json:"first"`
	Last  netip.Addr `json:"last"`
}

func (r Range) String() string {
	if r.First == r.Last {
		return r.First.String()
	}
	return r.First.String() + ".." + r.Last.String()
}

// Contains reports whether a lies in r.
func (r Range) Contains(a netip.Addr) bool {
	return a.BitLen() == r.First.BitLen() && r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// ParseRange parses a single address ("10.0.0.5") or Kube-OVN's excludeIps range form
// ("10.0.0.10..10.0.0.20"). Both ends must be of one family and in order.
func ParseRange(s string) (Range, error) {
	first, last, isRange := strings.Cut(strings.TrimSpace(s), "..")
	a, err := parseAddr(first)
	if err != nil {
		return Range{}, fmt.Errorf("parse range %q: %w", s, err)
	}
	if !isRange {
		return Range{First: a, Last: a}, nil
	}
	b, err := parseAddr(last)
	if err != nil {
		return Range{}, fmt.Errorf("parse range %q: %w", s, err)
	}
	r := Range{First: a, Last: b}
	if err := r.validate(); err != nil {
		return Range{}, fmt.Errorf("parse range %q: %w", s, err)
	}
	return r, nil
}

func parseAddr(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("address %s has a zone: %w", a, ErrInvalid)
	}
	return a.Unmap(), nil
}

func (r Range) validate() error {
	if !r.First.IsValid() || !r.Last.IsValid() {
		return fmt.Errorf("range %s: missing address: %w", r, ErrInvalid)
	}
	if r.First.BitLen() != r.Last.BitLen() {
		return fmt.Errorf("range %s mixes address families: %w", r, ErrInvalid)
	}
	if r.First.Compare(r.Last) > 0 {
		return fmt.Errorf("range %s ends before it starts: %w", r, ErrInvalid)
	}
	return nil
}

// Subnet is the IPAM's view of a logical switch's address space.
type Subnet struct {
	Name     string         `json:"name"`
	CIDRs    []netip.Prefix `json:"cidrs"`    // one per family; dual stack = 2
	Gateways []netip.Addr   `json:"gateways"` // at most one per family, reserved
	Excludes []Range        `json:"excludes"` // never handed out
}

// Request asks for the addresses of one owner on one subnet.
type Request struct {
	Subnet string
	Owner  Owner
	IPs    []netip.Addr     // static addresses, optional, at most one per family
	MAC    net.HardwareAddr // static MAC, optional
}

// Allocation is what an owner holds: one address per family of its subnet, and a MAC.
type Allocation struct {
	Subnet    string
	Owner     Owner
	IPs       []netip.Addr // IPv4 first, then IPv6
	MAC       net.HardwareAddr
	Allocated time.Time
}

// clone returns a copy sharing no slices with a, so callers cannot alter the IPAM's state.
func (a Allocation) clone() Allocation {
	a.IPs = append([]netip.Addr(nil), a.IPs...)
	a.MAC = append(net.HardwareAddr(nil), a.MAC...)
	return a
}

func (s Subnet) clone() Subnet {
	s.CIDRs = append([]netip.Prefix(nil), s.CIDRs...)
	s.Gateways = append([]netip.Addr(nil), s.Gateways...)
	s.Excludes = append([]Range(nil), s.Excludes...)
	return s
}
