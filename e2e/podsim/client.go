package podsim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// How a request failed, for tests that must tell an OVN reject from a black hole.
var (
	// ErrRefused: the far end or the network refused (TCP reset, ICMP port unreachable).
	ErrRefused = errors.New("refused")
	// ErrUnreachable: an ICMP host or network unreachable came back (or no ARP answer).
	ErrUnreachable = errors.New("unreachable")
	// ErrTimeout: nothing came back before the timeout.
	ErrTimeout = errors.New("timed out")
)

// defaultSendTimeout bounds a request when SendRequest.Timeout is zero: long enough for one
// TCP SYN retransmission (1 s) after a first packet lost to neighbour resolution.
const defaultSendTimeout = 3 * time.Second

// udpResend is how often a UDP request is sent again while no answer came: the datapath may
// drop a first packet while it resolves a neighbour. The copies share one 5-tuple, so load
// balancing sends them all to one backend.
const udpResend = 300 * time.Millisecond

// SendRequest is one request from a namespace.
type SendRequest struct {
	// Netns is the path of the client's network namespace (a Sandbox's Netns, or the rig's).
	Netns    string
	Protocol corev1.Protocol // TCP or UDP
	Addr     netip.AddrPort  // a Server's address, a ClusterIP and port, a NodePort
	// Timeout bounds the whole exchange; zero means 3 s.
	Timeout time.Duration
	// From is the source address (one of the namespace's); invalid: the kernel picks.
	From netip.Addr
}

// Answer is what a Server said.
type Answer struct {
	// Server is the answering Server's Name.
	Server string
	// Client is the request's source as the server saw it.
	Client netip.AddrPort
}

// Send sends one request to a Server and returns its answer. A failure wraps ErrRefused,
// ErrUnreachable or ErrTimeout when it is one of those.
func Send(ctx context.Context, req SendRequest) (Answer, error) {
	timeout := req.Timeout
	if timeout == 0 {
		timeout = defaultSendTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var line string
	var err error
	switch req.Protocol {
	case corev1.ProtocolTCP:
		line, err = sendTCP(ctx, req)
	case corev1.ProtocolUDP:
		line, err = sendUDP(ctx, req)
	default:
		err = fmt.Errorf("protocol %q not supported", req.Protocol)
	}
	if err != nil {
		return Answer{}, fmt.Errorf("%s request to %s from %s: %w", req.Protocol, req.Addr, req.Netns, classify(err))
	}
	a, err := parseAnswer(line)
	if err != nil {
		return Answer{}, fmt.Errorf("%s request to %s from %s: %w", req.Protocol, req.Addr, req.Netns, err)
	}
	return a, nil
}

// dialIn opens a connected socket inside the namespace; it keeps that namespace afterwards.
func dialIn(ctx context.Context, netns, network, addr string) (net.Conn, error) {
	return dialFrom(ctx, netns, network, netip.Addr{}, addr)
}

// dialFrom is dialIn from the source address from (invalid: the kernel's choice).
func dialFrom(ctx context.Context, netns, network string, from netip.Addr, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(netns, func() (err error) {
		var d net.Dialer
		if from.IsValid() {
			if network == "udp" {
				d.LocalAddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(from, 0))
			} else {
				d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(from, 0))
			}
		}
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

func sendTCP(ctx context.Context, req SendRequest) (string, error) {
	c, err := dialFrom(ctx, req.Netns, "tcp", req.From, req.Addr.String())
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	if _, err := c.Write([]byte("hello\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func sendUDP(ctx context.Context, req SendRequest) (string, error) {
	c, err := dialFrom(ctx, req.Netns, "udp", req.From, req.Addr.String())
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	buf := make([]byte, 2048)
	for {
		if _, err := c.Write([]byte("hello\n")); err != nil {
			return "", err
		}
		next := time.Now().Add(udpResend)
		if next.After(deadline) {
			next = deadline
		}
		_ = c.SetReadDeadline(next)
		n, err := c.Read(buf)
		if err == nil {
			return string(buf[:n]), nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline) {
			return "", err
		}
	}
}

// classify maps a socket error to the sentinel a test branches on, keeping the original.
func classify(err error) error {
	var kind error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		kind = ErrRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		kind = ErrUnreachable
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		kind = ErrTimeout
	default:
		return err
	}
	return fmt.Errorf("%w (%v)", kind, err)
}

// parseAnswer reads "<name> <addr:port>\n".
func parseAnswer(line string) (Answer, error) {
	name, client, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok {
		return Answer{}, fmt.Errorf("malformed answer %q", line)
	}
	ap, err := netip.ParseAddrPort(client)
	if err != nil {
		return Answer{}, fmt.Errorf("malformed answer %q: %w", line, err)
	}
	return Answer{Server: name, Client: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())}, nil
}
