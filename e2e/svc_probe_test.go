package e2e

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
)

// serveIdent answers every TCP connection and UDP datagram on addr (inside the namespace at
// netnsPath) with "<ident> <client address>", until the test ends: which backend answered,
// and whom it saw, is what Service tests look at.
func serveIdent(t *testing.T, netnsPath, addr, ident string) {
	t.Helper()
	var ln net.Listener
	var pc net.PacketConn
	err := inNS(netnsPath, func() (err error) {
		if ln, err = net.Listen("tcp", addr); err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp", addr)
		return err
	})
	if err != nil {
		t.Fatalf("serve %s in %s: %v", addr, netnsPath, err)
	}
	t.Cleanup(func() { ln.Close(); pc.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			_, _ = c.Write([]byte(ident + " " + host))
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 512)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(from.String())
			_, _ = pc.WriteTo([]byte(ident+" "+host), from)
		}
	}()
}

// errRefused is a connection refused or reset, or an ICMP unreachable: OVN's reject.
var errRefused = errors.New("refused")

// ask sends one request over network ("tcp" or "udp") to addr from inside the namespace
// and returns the answer; a refusal is errRefused, silence a timeout error.
func ask(ctx context.Context, netnsPath, network, addr string, timeout time.Duration) (string, error) {
	var answer string
	err := inNS(netnsPath, func() error {
		d := net.Dialer{Timeout: timeout}
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(timeout))
		if network == "udp" {
			if _, err := c.Write([]byte("?")); err != nil {
				return err
			}
		}
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		answer = string(buf[:n])
		return nil
	})
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EHOSTUNREACH) {
		return "", errRefused
	}
	return answer, err
}

func inNS(path string, f func() error) error {
	n, err := ns.GetNS(path)
	if err != nil {
		return err
	}
	defer n.Close()
	return n.Do(func(ns.NetNS) error { return f() })
}
