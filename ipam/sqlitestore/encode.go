package sqlitestore

import (
	"encoding/binary"
	"net"
	"net/netip"
)

// Addresses and MACs are stored as integers and blobs, not text: rows and indexes are
// smaller and loading needs no parsing.

func ip4Value(a netip.Addr) int64 {
	b := a.As4()
	return int64(binary.BigEndian.Uint32(b[:]))
}

func ip4FromValue(v int64) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], uint32(v))
	return netip.AddrFrom4(b)
}

// ipBlob is the address's octets: 4 for IPv4, 16 for IPv6.
func ipBlob(a netip.Addr) []byte { return a.AsSlice() }

func macValue(mac net.HardwareAddr) int64 {
	var v int64
	for _, b := range mac {
		v = v<<8 | int64(b)
	}
	return v
}

// putMAC writes the 48-bit value v into dst, which has 6 octets.
func putMAC(dst []byte, v int64) {
	for i := 5; i >= 0; i-- {
		dst[i] = byte(v)
		v >>= 8
	}
}
