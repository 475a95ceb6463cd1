package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/containernetworking/plugins/pkg/ns"
)

// throughput sends size bytes over one TCP connection from the client's namespace to a
// listener in the server's, and returns the rate from the connect to the server's
// acknowledgement of the last byte, in Mbit/s.
func throughput(ctx context.Context, clientNetns, serverNetns string, server netip.Addr, size int64) (float64, error) {
	var ln net.Listener
	if err := inNetns(serverNetns, func() (err error) {
		ln, err = net.Listen("tcp", netip.AddrPortFrom(server, 0).String())
		return err
	}); err != nil {
		return 0, fmt.Errorf("listen on %s: %w", server, err)
	}
	defer ln.Close()
	go sink(ln)
	var conn net.Conn
	start := time.Now()
	if err := inNetns(clientNetns, func() (err error) {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", ln.Addr().String())
		return err
	}); err != nil {
		return 0, fmt.Errorf("connect to %s: %w", ln.Addr(), err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := io.CopyN(conn, zeros{}, size); err != nil {
		return 0, fmt.Errorf("send to %s: %w", ln.Addr(), err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return 0, err
	}
	ack, err := io.ReadAll(conn)
	if err != nil || strings.TrimSpace(string(ack)) != strconv.FormatInt(size, 10) {
		return 0, fmt.Errorf("server received %q of %d bytes: %v", ack, size, err)
	}
	return float64(size*8) / time.Since(start).Seconds() / 1e6, nil
}

// sink accepts one connection, reads it to the end and answers how many bytes it got.
func sink(ln net.Listener) {
	c, err := ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	n, _ := io.Copy(io.Discard, c)
	fmt.Fprintf(c, "%d\n", n)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// inNetns runs f in the namespace at path; sockets it opens keep that namespace.
func inNetns(path string, f func() error) error {
	target, err := ns.GetNS(path)
	if err != nil {
		return err
	}
	defer target.Close()
	return target.Do(func(ns.NetNS) error { return f() })
}

func msec(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Nanoseconds())/1e6) }
