package ipam

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
)

// macPrefix is the first octet of generated MACs: locally administered (0x02) and unicast
// (0x01 clear), as Kubernetes network plugins commonly use (0a:58:...).
const macPrefix = 0x0a

// macKey indexes MACs without allocating: the 48-bit value, an integer so the map takes its
// fast path. Every MAC the IPAM holds has 6 octets (requests are validated, stored ones
// checked at load).
type macKey uint64

func keyOf(mac net.HardwareAddr) macKey {
	var b [8]byte
	copy(b[2:], mac)
	return macKey(binary.BigEndian.Uint64(b[:]))
}

func validMAC(mac net.HardwareAddr) error {
	switch {
	case len(mac) != 6:
		return fmt.Errorf("mac %s: want 6 octets: %w", mac, ErrInvalid)
	case mac[0]&0x01 != 0:
		return fmt.Errorf("mac %s is a multicast address: %w", mac, ErrInvalid)
	case bytes.Equal(mac, make(net.HardwareAddr, 6)):
		return fmt.Errorf("mac %s is all zeros: %w", mac, ErrInvalid)
	}
	return nil
}

// pickMAC returns the requested MAC (unless another owner holds it), else the owner's
// current one, else one derived from the new addresses, else a random one that no live
// allocation holds.
func (m *IPAM) pickMAC(r Request, cur *Allocation, ips []netip.Addr) (net.HardwareAddr, error) {
	if r.MAC != nil {
		if h, held := m.macs[keyOf(r.MAC)]; held && h != r.Owner {
			return nil, fmt.Errorf("mac %s: %w %s", r.MAC, ErrConflict, h)
		}
		return append(net.HardwareAddr(nil), r.MAC...), nil
	}
	if cur != nil {
		return append(net.HardwareAddr(nil), cur.MAC...), nil
	}
	if mac := derivedMAC(ips); mac != nil {
		if _, held := m.macs[keyOf(mac)]; !held {
			return mac, nil
		}
	}
	for {
		mac := net.HardwareAddr{macPrefix, 0, 0, 0, 0, 0}
		v := rand.Uint64()
		for i := 1; i < 6; i++ {
			mac[i] = byte(v >> (8 * i))
		}
		if _, held := m.macs[keyOf(mac)]; !held {
			return mac, nil
		}
	}
}

// derivedMAC is 0a:58 followed by the last four octets of the first address (the convention
// of ovn-kubernetes). Consecutive addresses get consecutive MACs, which keeps the store's MAC
// index appending instead of touching a random page per allocation.
func derivedMAC(ips []netip.Addr) net.HardwareAddr {
	if len(ips) == 0 {
		return nil
	}
	b := ips[0].AsSlice()
	return append(net.HardwareAddr{macPrefix, 0x58}, b[len(b)-4:]...)
}
