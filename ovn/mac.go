package ovn

import "net"

// UnicastMAC reports whether mac is what the kernel and OVN accept as a port's address: six
// octets, not multicast (which includes broadcast), not all zero.
func UnicastMAC(mac net.HardwareAddr) bool {
	if len(mac) != 6 || mac[0]&1 == 1 {
		return false
	}
	for _, b := range mac {
		if b != 0 {
			return true
		}
	}
	return false
}
