package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// exchange is one request to a testserver at addr; bytes > 0 (TCP only) sends that much and
// reads it back first. It returns the answer line.
func exchange(ctx context.Context, proto, addr string, bytes int64) (string, error) {
	switch proto {
	case "tcp":
		return exchangeTCP(ctx, addr, bytes)
	case "udp":
		return exchangeUDP(ctx, addr)
	}
	return "", fmt.Errorf("protocol %q: want tcp or udp", proto)
}

func exchangeTCP(ctx context.Context, addr string, n int64) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	req := "hello\n"
	if n > 0 {
		req = bulkRequest(n)
	}
	if _, err := io.WriteString(c, req); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	if n > 0 {
		go func() { _, _ = io.CopyN(c, zeros{}, n) }()
		got, err := io.CopyN(io.Discard, r, n)
		if err != nil {
			return "", fmt.Errorf("bulk: %d of %d bytes back: %w", got, n, err)
		}
	}
	return r.ReadString('\n')
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// exchangeUDP sends the request every 300 ms until an answer comes (a first packet may be
// lost while a neighbour is resolved).
func exchangeUDP(ctx context.Context, addr string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(3 * time.Second)
	}
	buf := make([]byte, 2048)
	for {
		if _, err := c.Write([]byte("hello\n")); err != nil {
			return "", err
		}
		next := time.Now().Add(300 * time.Millisecond)
		if next.After(dl) {
			next = dl
		}
		_ = c.SetReadDeadline(next)
		n, err := c.Read(buf)
		if err == nil {
			return strings.TrimSpace(string(buf[:n])) + "\n", nil
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(dl) {
			return "", err
		}
	}
}
