package podsim

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
)

// Ping sends three pings from the sandbox to addr and returns ping's output.
func Ping(ctx context.Context, from *Sandbox, addr netip.Addr) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "exec", from.NetnsName(),
		"ping", "-c", "3", "-i", "0.2", "-W", "1", addr.String()).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ping %s from pod %s: %w\n%s", addr, from.Pod.Name, err, out)
	}
	return string(out), nil
}

// TCP opens a listener in server's namespace, connects from client's and echoes a payload.
func TCP(ctx context.Context, client, server *Sandbox) error {
	if err := TCPBetween(ctx, client.Netns, server.Netns, server.IP()); err != nil {
		return fmt.Errorf("pod %s -> pod %s: %w", client.Pod.Name, server.Pod.Name, err)
	}
	return nil
}

// TCPBetween listens on serverIP in the namespace at serverNetns, connects from the one at
// clientNetns and echoes 140 KB: enough segments that a checksum the datapath left unfilled
// would show.
func TCPBetween(ctx context.Context, clientNetns, serverNetns string, serverIP netip.Addr) error {
	return TCPEcho(ctx, Echo{ClientNetns: clientNetns, ServerNetns: serverNetns, Listen: netip.AddrPortFrom(serverIP, 0)})
}

// Echo is a TCP echo between two network namespaces.
type Echo struct {
	ClientNetns, ServerNetns string
	Listen                   netip.AddrPort // port 0: any
	Dial                     netip.AddrPort // invalid: the listener's own address (no NAT between)
}

// TCPEcho listens in the server's namespace, connects from the client's to Dial (a hostPort,
// say, that NAT leads to the listener) and echoes 140 KB.
func TCPEcho(ctx context.Context, e Echo) error {
	var ln net.Listener
	err := inNetns(e.ServerNetns, func() (err error) {
		ln, err = net.Listen("tcp", e.Listen.String())
		return err
	})
	if err != nil {
		return fmt.Errorf("listen on %s: %w", e.Listen, err)
	}
	dial := e.Dial.String()
	if !e.Dial.IsValid() {
		dial = ln.Addr().String()
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	var conn net.Conn
	err = inNetns(e.ClientNetns, func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err = d.DialContext(ctx, "tcp", dial)
		return err
	})
	if err != nil {
		return fmt.Errorf("connect to %s: %w", dial, err)
	}
	defer conn.Close()
	payload := bytes.Repeat([]byte("edgeovn"), 20000)
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = conn.Write(payload) }()
	got := make([]byte, len(payload))
	if _, err := io.ReadFull(conn, got); err != nil {
		return fmt.Errorf("tcp echo with %s: %w", dial, err)
	}
	if !bytes.Equal(got, payload) {
		return fmt.Errorf("tcp echo with %s: payload corrupted", dial)
	}
	return nil
}

func inNetns(path string, f func() error) error {
	n, err := ns.GetNS(path)
	if err != nil {
		return err
	}
	defer n.Close()
	return n.Do(func(ns.NetNS) error { return f() })
}
