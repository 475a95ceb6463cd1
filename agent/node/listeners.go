package node

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Socket states as sock_diag's bit mask takes them (include/net/tcp_states.h): a listening
// TCP socket, and a UDP socket that is bound but not connected (UDP uses TCP_CLOSE for it).
const (
	tcpListen = 10
	tcpClose  = 7
)

// hostListeners are the sockets bound in this network namespace that a DNAT of the host's
// own address would cut off: TCP sockets in LISTEN and unconnected UDP sockets, read through
// sock_diag, which asks the kernel for those states only. /proc/net/tcp lists every socket,
// TIME_WAIT included: on a host serving many short connections, reading it at each pass of
// the services loop took seconds (lbbench's health check flips, p95 3.5-6 s). IPv6 wildcard
// sockets (which take IPv4 too unless v6only) count as 0.0.0.0, v4-mapped ones as their IPv4
// address.
func hostListeners() (map[string]map[netip.AddrPort]bool, error) {
	out := map[string]map[netip.AddrPort]bool{"tcp": {}, "udp": {}}
	for _, q := range []struct {
		proto   string
		ipproto uint8
		state   uint
	}{{"tcp", unix.IPPROTO_TCP, tcpListen}, {"udp", unix.IPPROTO_UDP, tcpClose}} {
		for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
			bound, err := diagBound(diagRequest{family: family, protocol: q.ipproto, states: 1 << q.state})
			if family == unix.AF_INET6 && (errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EAFNOSUPPORT)) {
				continue // no IPv6
			}
			if err != nil {
				return nil, fmt.Errorf("read listening %s sockets: %w", q.proto, err)
			}
			for _, a := range bound {
				out[q.proto][a] = true
			}
		}
	}
	return out, nil
}

// diagRequest is struct inet_diag_req_v2 with an empty socket id: every socket of the
// family and protocol in the given states.
type diagRequest struct {
	family, protocol uint8
	states           uint32
}

// sizeofDiagRequest: family, protocol, ext, pad, states (8) and inet_diag_sockid (48).
const sizeofDiagRequest = 56

func (r diagRequest) Len() int { return sizeofDiagRequest }

func (r diagRequest) Serialize() []byte {
	b := make([]byte, sizeofDiagRequest)
	b[0], b[1] = r.family, r.protocol
	binary.NativeEndian.PutUint32(b[4:8], r.states)
	return b
}

// sizeofDiagMsg is struct inet_diag_msg: family, state, timer, retrans, inet_diag_sockid (48),
// expires, rqueue, wqueue, uid, inode.
const sizeofDiagMsg = 72

// diagBound dumps the sockets req selects and returns their local addresses.
func diagBound(req diagRequest) ([]netip.AddrPort, error) {
	nreq := nl.NewNetlinkRequest(nl.SOCK_DIAG_BY_FAMILY, unix.NLM_F_DUMP)
	nreq.AddData(req)
	msgs, err := nreq.Execute(unix.NETLINK_INET_DIAG, 0)
	if err != nil {
		return nil, err
	}
	var out []netip.AddrPort
	for _, m := range msgs {
		if a, ok := diagLocal(m); ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// diagLocal reads an inet_diag_msg's local address and port (network order), as the guard
// compares them: IPv4, the IPv6 wildcard as 0.0.0.0, v4-mapped as IPv4; other IPv6 addresses
// are not an IPv4 Service IP's concern.
func diagLocal(m []byte) (netip.AddrPort, bool) {
	if len(m) < sizeofDiagMsg {
		return netip.AddrPort{}, false
	}
	port := binary.BigEndian.Uint16(m[4:6])
	var a netip.Addr
	switch m[0] {
	case unix.AF_INET:
		a = netip.AddrFrom4([4]byte(m[8:12]))
	case unix.AF_INET6:
		a = netip.AddrFrom16([16]byte(m[8:24]))
	default:
		return netip.AddrPort{}, false
	}
	switch {
	case a.Is6() && a.IsUnspecified():
		a = netip.IPv4Unspecified()
	case a.Is4In6():
		a = a.Unmap()
	case a.Is6():
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a, port), true
}
