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
	var ln net.Listener
	err := inNetns(server.Netns, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(server.IP().String(), "0"))
		return err
	})
	if err != nil {
		return fmt.Errorf("listen in pod %s: %w", server.Pod.Name, err)
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
	err = inNetns(client.Netns, func() (err error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		conn, err = d.DialContext(ctx, "tcp", ln.Addr().String())
		return err
	})
	if err != nil {
		return fmt.Errorf("connect from pod %s to %s: %w", client.Pod.Name, ln.Addr(), err)
	}
	defer conn.Close()
	payload := bytes.Repeat([]byte("edgeovn"), 20000)
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = conn.Write(payload) }()
	got := make([]byte, len(payload))
	if _, err := io.ReadFull(conn, got); err != nil {
		return fmt.Errorf("tcp echo %s -> %s: %w", client.Pod.Name, server.Pod.Name, err)
	}
	if !bytes.Equal(got, payload) {
		return fmt.Errorf("tcp echo %s -> %s: payload corrupted", client.Pod.Name, server.Pod.Name)
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
