package northbound

import (
	"crypto/sha256"
	"net"
	"net/netip"
)

// GatewayMAC derives a router port's MAC from its address, so that ensuring the same subnet
// again computes the same MAC and changes nothing. The MAC is locally administered and
// unicast (first octet 0x0a); an IPv4 address is embedded as is, as ovn-kubernetes does, an
// IPv6 address is hashed into the low four octets.
func GatewayMAC(ip netip.Addr) net.HardwareAddr {
	ip = ip.Unmap()
	var low [4]byte
	if ip.Is4() {
		low = ip.As4()
	} else {
		sum := sha256.Sum256(ip.AsSlice())
		copy(low[:], sum[:4])
	}
	return net.HardwareAddr{0x0a, 0x58, low[0], low[1], low[2], low[3]}
}
