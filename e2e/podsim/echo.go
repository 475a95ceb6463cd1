package podsim

import (
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// probeInterval is how often a probe sends an echo request to a target that has not answered.
const probeInterval = 100 * time.Millisecond

// echoUntilAnswered sends ICMP echo requests from inside sb's namespace to dst every
// probeInterval until one is answered (true), or ctx ends or the socket cannot be opened
// (false). It runs in this process, not as `ip netns exec ping`: a bench probing hundreds of
// pods at once would otherwise spend a core-second of the machine it measures on the probes'
// processes (2.5 ms of CPU each here).
func echoUntilAnswered(ctx context.Context, sb *Sandbox, dst netip.Addr) bool {
	e, err := openEcho(sb, dst)
	if err != nil {
		return false
	}
	defer e.conn.Close()
	for seq := 0; ctx.Err() == nil; seq++ {
		_ = e.send(seq) // a failed send is a request never answered
		if e.answered(seq, time.Now().Add(probeInterval)) {
			return true
		}
	}
	return false
}

// echo is one probe's raw ICMP socket in a pod's namespace.
type echo struct {
	conn  *icmp.PacketConn
	dst   netip.Addr
	id    int
	proto int // 1 (ICMP) or 58 (ICMPv6), as icmp.ParseMessage takes it
}

func openEcho(sb *Sandbox, dst netip.Addr) (*echo, error) {
	network, bind, proto := "ip4:icmp", "0.0.0.0", 1
	if dst.Is6() {
		network, bind, proto = "ip6:ipv6-icmp", "::", 58
	}
	e := &echo{dst: dst, id: rand.IntN(1 << 16), proto: proto}
	err := inNetns(sb.Netns, func() (err error) {
		e.conn, err = icmp.ListenPacket(network, bind)
		return err
	})
	return e, err
}

func (e *echo) send(seq int) error {
	b, err := marshalEcho(e.proto, e.id, seq)
	if err != nil {
		return err
	}
	_, err = e.conn.WriteTo(b, &net.IPAddr{IP: e.dst.AsSlice()})
	return err
}

// marshalEcho is an echo request of proto (1: ICMP, 58: ICMPv6) with id and seq (mod 2^16);
// ICMPv6's checksum is the kernel's on a raw socket.
func marshalEcho(proto, id, seq int) ([]byte, error) {
	var typ icmp.Type = ipv4.ICMPTypeEcho
	if proto == 58 {
		typ = ipv6.ICMPTypeEchoRequest
	}
	msg := icmp.Message{Type: typ, Body: &icmp.Echo{ID: id, Seq: seq & 0xffff, Data: []byte("edgeovn")}}
	return msg.Marshal(nil)
}

// echoReplySeq is the sequence number of b when it is an echo reply of proto to id.
func echoReplySeq(proto int, b []byte, id int) (int, bool) {
	m, err := icmp.ParseMessage(proto, b)
	if err != nil || (m.Type != ipv4.ICMPTypeEchoReply && m.Type != ipv6.ICMPTypeEchoReply) {
		return 0, false
	}
	r, ok := m.Body.(*icmp.Echo)
	if !ok || r.ID != id {
		return 0, false
	}
	return r.Seq, true
}

// answered reads until deadline and reports whether an echo reply from dst to this probe's
// request seq (or an earlier one: a late reply is still an answer) arrived. A raw socket gets
// every ICMP message of the namespace: replies to other probes are skipped by their ID.
func (e *echo) answered(seq int, deadline time.Time) bool {
	_ = e.conn.SetReadDeadline(deadline)
	buf := make([]byte, 1500)
	for {
		n, from, err := e.conn.ReadFrom(buf)
		if err != nil { // the deadline, or a socket that cannot be read
			return false
		}
		if !e.fromTarget(from) {
			continue
		}
		if got, ok := echoReplySeq(e.proto, buf[:n], e.id); ok && got <= seq&0xffff {
			return true
		}
	}
}

func (e *echo) fromTarget(from net.Addr) bool {
	a, ok := from.(*net.IPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(a.IP)
	return ok && ip.Unmap() == e.dst.Unmap()
}
