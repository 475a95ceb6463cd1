package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

// ncArgs is a parsed `nc [-v] [-t|-u] [-z] [-w SECONDS] HOST PORT`.
type ncArgs struct {
	udp     bool
	verbose bool
	scan    bool // -z: connect only
	wait    time.Duration
	addr    string
}

func parseNCArgs(args []string) (ncArgs, error) {
	a := ncArgs{wait: 2 * time.Second}
	var pos []string
	for i := 0; i < len(args); i++ {
		switch arg := args[i]; arg {
		case "-v":
			a.verbose = true
		case "-t":
			a.udp = false
		case "-u":
			a.udp = true
		case "-z":
			a.scan = true
		case "-w":
			if i+1 >= len(args) {
				return a, errors.New("option -w needs a value")
			}
			i++
			w, err := seconds(args[i], nil)
			if err != nil {
				return a, err
			}
			a.wait = w
		default:
			if len(arg) > 1 && arg[0] == '-' {
				return a, fmt.Errorf("unknown option %s", arg)
			}
			pos = append(pos, arg)
		}
	}
	if len(pos) != 2 {
		return a, fmt.Errorf("want HOST PORT, got %q", pos)
	}
	if _, err := strconv.ParseUint(pos[1], 10, 16); err != nil {
		return a, fmt.Errorf("bad port %q", pos[1])
	}
	a.addr = net.JoinHostPort(pos[0], pos[1])
	return a, nil
}

// netcat sends standard input to HOST:PORT over TCP (then half-closes) or UDP (one datagram)
// and copies what comes back to standard output until the peer closes or nothing came for
// -w seconds. A failed connection is exit code 1.
func netcat(ctx context.Context, s stdio, args []string) int {
	a, err := parseNCArgs(args)
	if err != nil {
		return usage(s, "nc", "%v", err)
	}
	network := "tcp"
	if a.udp {
		network = "udp"
	}
	d := net.Dialer{Timeout: a.wait}
	c, err := d.DialContext(ctx, network, a.addr)
	if err != nil {
		fmt.Fprintf(s.err, "nc: connect to %s (%s) failed: %v\n", a.addr, network, err)
		return 1
	}
	defer c.Close()
	if a.verbose {
		fmt.Fprintf(s.err, "Connection to %s %s port [%s/*] succeeded!\n", c.RemoteAddr(), network, network)
	}
	if a.scan {
		return 0
	}
	data, err := io.ReadAll(s.in)
	if err != nil {
		fmt.Fprintf(s.err, "nc: read stdin: %v\n", err)
		return 1
	}
	if _, err := c.Write(data); err != nil {
		fmt.Fprintf(s.err, "nc: send to %s: %v\n", a.addr, err)
		return 1
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	return copyUntilIdle(s, c, a.wait)
}

// copyUntilIdle copies from c to standard output until EOF or until nothing came for idle.
func copyUntilIdle(s stdio, c net.Conn, idle time.Duration) int {
	buf := make([]byte, 64<<10)
	for {
		_ = c.SetReadDeadline(time.Now().Add(idle))
		n, err := c.Read(buf)
		if n > 0 {
			_, _ = s.out.Write(buf[:n])
		}
		var netErr net.Error
		switch {
		case err == nil:
		case errors.Is(err, io.EOF), errors.As(err, &netErr) && netErr.Timeout():
			return 0
		case errors.Is(err, os.ErrDeadlineExceeded):
			return 0
		default:
			fmt.Fprintf(s.err, "nc: %v\n", err)
			return 1
		}
	}
}
