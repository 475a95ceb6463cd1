package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// TestReusedTupleInTimeWait is a TCP 5-tuple reused while the server still holds it in
// TIME_WAIT, as the host's masquerade does under load (docs/benchmarks.md, LoadBalancer IPs):
// the host connects to a pod from one source port, the pod closes first (TIME_WAIT), then a
// SYN from the same port with a sequence number before the old connection's end arrives.
// Linux answers it with the old connection's ACK, the client's RST to that ends the
// TIME_WAIT, and the client's next SYN opens the connection. Open vSwitch 3.1's userspace
// conntrack drops that RST as out of window (conntrack_tcp_seq_chk_failed) unless the node
// role has turned its TCP sequence check off: the pod stays in TIME_WAIT and the client's
// connection is lost. Checked at the start and after ovs-vswitchd restarts.
func TestReusedTupleInTimeWait(t *testing.T) {
	env, ctx := startNode(t)
	pod := runPod(ctx, t, env, "tw-server")
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: pod.Netns, Port: 8080, Name: "tw-server"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	server := netip.AddrPortFrom(pod.IP(), 8080)
	eventually(ctx, t, "the host reaches the pod's server", func() bool {
		_, err := podsim.Send(ctx, podsim.SendRequest{Netns: env.rig.NetnsPath, Protocol: corev1.ProtocolTCP, Addr: server, Timeout: time.Second})
		return err == nil
	})
	var tw *tcpRaw
	if err := ns.WithNetNSPath(env.rig.NetnsPath, func(ns.NetNS) (err error) { tw, err = openTCPRaw("ovn0"); return err }); err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	port := uint16(40000)
	reuseOpens(ctx, t, env, tw, &port, server, "at the node role's start")

	// ovs-vswitchd forgets the setting when it restarts: the node role turns it off again.
	vswitchd, err := env.rig.Daemon("ovs-vswitchd")
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(vswitchd.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-vswitchd.Done()
	if _, err := env.rig.RestartDaemon(ctx, "ovs-vswitchd"); err != nil {
		t.Fatal(err)
	}
	eventually(ctx, t, "the host reaches the pod's server after ovs-vswitchd's restart", func() bool {
		_, err := podsim.Send(ctx, podsim.SendRequest{Netns: env.rig.NetnsPath, Protocol: corev1.ProtocolTCP, Addr: server, Timeout: time.Second})
		return err == nil
	})
	reuseOpens(ctx, t, env, tw, &port, server, "after ovs-vswitchd's restart")
}

// reuseOpens puts a tuple in the server's TIME_WAIT and reuses it from the host with a SYN
// before the old connection's end and without timestamps: Linux's TIME_WAIT answers with its
// ACK, the host's kernel (no socket on that port) answers that with a RST, which ends the
// TIME_WAIT; the same SYN again then opens a connection. Tried up to 3 times, a new port each
// time, tcpSeqCheckWait apart (the node role's interval).
func reuseOpens(ctx context.Context, t *testing.T, env *env, tw *tcpRaw, port *uint16, server netip.AddrPort, when string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		*port++
		local := requestFrom(ctx, t, env.rig.NetnsPath, *port, server)
		end, err := tw.lastAck(server, local, time.Second)
		if err != nil {
			t.Fatalf("%s: the pod's last ACK of the first connection: %v", when, err)
		}
		seq := end - 1_000_000
		if err := tw.sendSYN(local, server, seq); err != nil {
			t.Fatal(err)
		}
		ack, err := tw.await(server, local, tcpACK, 2*time.Second)
		if err != nil {
			t.Fatalf("%s: the pod never answered a SYN on its TIME_WAIT tuple: %v", when, err)
		}
		if ack != end {
			t.Fatalf("%s: the pod answered the reused tuple's SYN with ack %d, want its TIME_WAIT's %d", when, ack, end)
		}
		time.Sleep(50 * time.Millisecond) // Linux sends the SYN again after 10 ms
		if err := tw.sendSYN(local, server, seq); err != nil {
			t.Fatal(err)
		}
		ack, err = tw.await(server, local, tcpSYN|tcpACK, time.Second)
		if err == nil {
			if ack != seq+1 {
				t.Fatalf("%s: the pod's SYN-ACK acks %d, want %d", when, ack, seq+1)
			}
			return
		}
		if attempt == 3 {
			out, _ := env.rig.Run(ctx, "ovs-appctl", "-t", env.rig.Dir+"/ovs-vswitchd.ctl", "coverage/show")
			t.Fatalf("%s: the reused tuple never opened (the RST that ends the pod's TIME_WAIT lost in the datapath?): %v\n%s", when, err, out)
		}
		time.Sleep(tcpSeqCheckWait)
	}
}

// tcpSeqCheckWait covers the node role's check interval (agent/node's tcpSeqCheckEvery).
const tcpSeqCheckWait = 6 * time.Second

// requestFrom sends one request to server from the host's given source port and waits for the
// server's close (the server closes first, so the server's side is in TIME_WAIT after it).
func requestFrom(ctx context.Context, t *testing.T, netns string, port uint16, server netip.AddrPort) netip.AddrPort {
	t.Helper()
	var local netip.AddrPort
	err := ns.WithNetNSPath(netns, func(ns.NetNS) error {
		d := net.Dialer{LocalAddr: &net.TCPAddr{Port: int(port)}, Timeout: 2 * time.Second}
		c, err := d.DialContext(ctx, "tcp", server.String())
		if err != nil {
			return err
		}
		defer c.Close()
		local = c.LocalAddr().(*net.TCPAddr).AddrPort()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("hello\n")); err != nil {
			return err
		}
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				return nil // EOF: the server closed
			}
		}
	})
	if err != nil {
		t.Fatalf("request from port %d to %s: %v", port, server, err)
	}
	return netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
}

// tcpRaw is a raw IPv4 TCP socket: it sees every TCP segment the namespace receives and sends
// segments the kernel's TCP stack knows nothing of.
type tcpRaw struct{ fd int }

// openTCPRaw opens the socket on device (the host's ovn0: the API server's traffic on the
// loopback would fill its buffer).
func openTCPRaw(device string) (*tcpRaw, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, fmt.Errorf("raw tcp socket: %w", err)
	}
	if err := syscall.SetsockoptString(fd, syscall.SOL_SOCKET, syscall.SO_BINDTODEVICE, device); err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("raw tcp socket on %s: %w", device, err)
	}
	return &tcpRaw{fd: fd}, nil
}

func (r *tcpRaw) Close() error { return syscall.Close(r.fd) }

// segment is what the tests read of a received TCP segment.
type segment struct {
	from, to netip.AddrPort
	seq, ack uint32
	flags    byte
}

const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpACK = 0x10
)

// next reads segments from from to to until match says yes or the deadline passes.
func (r *tcpRaw) next(from, to netip.AddrPort, until time.Time, match func(segment) bool) (segment, error) {
	buf := make([]byte, 65536)
	for {
		left := time.Until(until)
		if left <= 0 {
			return segment{}, os.ErrDeadlineExceeded
		}
		tv := syscall.NsecToTimeval(left.Nanoseconds())
		if err := syscall.SetsockoptTimeval(r.fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
			return segment{}, err
		}
		n, _, err := syscall.Recvfrom(r.fd, buf, 0)
		if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return segment{}, err
		}
		s, ok := parseSegment(buf[:n])
		if ok && s.from == from && s.to == to && match(s) {
			return s, nil
		}
	}
}

func parseSegment(b []byte) (segment, bool) {
	if len(b) < 20 {
		return segment{}, false
	}
	ihl := int(b[0]&0x0f) * 4
	if len(b) < ihl+20 {
		return segment{}, false
	}
	src, dst := netip.AddrFrom4([4]byte(b[12:16])), netip.AddrFrom4([4]byte(b[16:20]))
	tcp := b[ihl:]
	return segment{from: netip.AddrPortFrom(src, binary.BigEndian.Uint16(tcp[0:2])), to: netip.AddrPortFrom(dst, binary.BigEndian.Uint16(tcp[2:4])),
		seq: binary.BigEndian.Uint32(tcp[4:8]), ack: binary.BigEndian.Uint32(tcp[8:12]), flags: tcp[13]}, true
}

// lastAck is the ack number of the server's last segment to local after its FIN: the end of
// what it received (its TIME_WAIT's rcv_nxt). The segments are already queued on the socket.
func (r *tcpRaw) lastAck(server, local netip.AddrPort, wait time.Duration) (uint32, error) {
	until := time.Now().Add(wait)
	var last uint32
	sawFIN := false
	for {
		s, err := r.next(server, local, until, func(segment) bool { return true })
		if err != nil {
			if sawFIN && last != 0 {
				return last, nil
			}
			return 0, err
		}
		sawFIN = sawFIN || s.flags&tcpFIN != 0
		if s.flags&tcpACK != 0 {
			last = s.ack
		}
	}
}

// await waits for a segment from server to local whose SYN, RST and ACK flags are flags, and
// returns its ack number.
func (r *tcpRaw) await(server, local netip.AddrPort, flags byte, wait time.Duration) (uint32, error) {
	s, err := r.next(server, local, time.Now().Add(wait), func(s segment) bool { return s.flags&(tcpSYN|tcpRST|tcpACK) == flags })
	return s.ack, err
}

// sendSYN sends a bare SYN (no options) from local to server with sequence number seq.
func (r *tcpRaw) sendSYN(local, server netip.AddrPort, seq uint32) error {
	tcp := make([]byte, 20)
	binary.BigEndian.PutUint16(tcp[0:2], local.Port())
	binary.BigEndian.PutUint16(tcp[2:4], server.Port())
	binary.BigEndian.PutUint32(tcp[4:8], seq)
	tcp[12] = 5 << 4
	tcp[13] = tcpSYN
	binary.BigEndian.PutUint16(tcp[14:16], 64240)
	binary.BigEndian.PutUint16(tcp[16:18], tcpChecksum(local.Addr(), server.Addr(), tcp))
	to := &syscall.SockaddrInet4{Addr: server.Addr().As4()}
	if err := syscall.Sendto(r.fd, tcp, 0, to); err != nil {
		return fmt.Errorf("send a raw syn %s -> %s: %w", local, server, err)
	}
	return nil
}

func tcpChecksum(src, dst netip.Addr, tcp []byte) uint16 {
	s, d := src.As4(), dst.As4()
	pseudo := append(append(append(s[:], d[:]...), 0, syscall.IPPROTO_TCP), byte(len(tcp)>>8), byte(len(tcp)))
	var sum uint32
	for _, b := range [][]byte{pseudo, tcp} {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(binary.BigEndian.Uint16(b[i:]))
		}
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
