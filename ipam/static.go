package ipam

import (
	"fmt"
	"net/netip"
	"slices"
)

// CheckStatic reports why the addresses could never be pinned in subnet, whoever holds
// them: outside its CIDRs (naming the subnet they belong to, if any), its network or
// broadcast address, its gateway, or excluded. nil means each may be requested (and is
// handed out if no other owner holds it). A pool of addresses is checked whole before any
// of them is tried, so a bad entry is reported even while the good ones are free.
func (m *IPAM) CheckStatic(subnet string, ips []netip.Addr) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	sn := m.subnets[subnet]
	if sn == nil {
		return fmt.Errorf("subnet %s: %w", subnet, ErrUnknownSubnet)
	}
	for _, ip := range ips {
		if err := m.checkInside(sn, ip); err != nil {
			return err
		}
		pl := sn.pool(ip)
		if err := sn.checkHost(pl, ip); err != nil {
			return err
		}
		if err := sn.checkNotExcluded(pl, ip); err != nil {
			return err
		}
	}
	return nil
}

// checkInside fails when ip is outside sn's CIDRs, naming the subnet that has it. The caller
// holds m.mu.
func (m *IPAM) checkInside(sn *subnet, ip netip.Addr) error {
	if slices.ContainsFunc(sn.spec.CIDRs, func(p netip.Prefix) bool { return p.Contains(ip) }) {
		return nil
	}
	for _, other := range m.subnets {
		for _, p := range other.spec.CIDRs {
			if other != sn && p.Contains(ip) {
				return fmt.Errorf("address %s belongs to subnet %s (%s), not to subnet %s (%v): %w",
					ip, other.spec.Name, p, sn.spec.Name, sn.spec.CIDRs, ErrOutOfRange)
			}
		}
	}
	return fmt.Errorf("address %s is outside subnet %s (%v): %w", ip, sn.spec.Name, sn.spec.CIDRs, ErrOutOfRange)
}

// checkHost fails when ip, inside pl's prefix, is not a host address or is the gateway.
func (sn *subnet) checkHost(pl *pool, ip netip.Addr) error {
	switch {
	case !pl.prefix.Contains(ip):
		return fmt.Errorf("address %s is outside %s: %w", ip, pl.prefix, ErrOutOfRange)
	case !pl.usable.Contains(ip):
		return fmt.Errorf("address %s is the network or broadcast address of %s: %w", ip, pl.prefix, ErrOutOfRange)
	case slices.Contains(sn.spec.Gateways, ip):
		return fmt.Errorf("address %s: %w of subnet %s", ip, ErrGateway, sn.spec.Name)
	}
	return nil
}

func (sn *subnet) checkNotExcluded(pl *pool, ip netip.Addr) error {
	if pl.isReserved(ip) {
		return fmt.Errorf("address %s is in an excluded range of subnet %s: %w", ip, sn.spec.Name, ErrExcluded)
	}
	return nil
}
