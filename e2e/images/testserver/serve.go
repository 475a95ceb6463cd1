package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxBulk bounds a bulk request.
const maxBulk = 64 << 20

type server struct {
	name string

	mu      sync.Mutex
	streams map[streamKey]*stream
}

func (s *server) answer(client net.Addr) string { return s.name + " " + client.String() + "\n" }

func (s *server) serveTCP(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go s.handleTCP(c)
	}
}

// handleTCP answers one request line: any line gets the answer; "bulk N" is followed by N
// bytes, which come back before the answer.
func (s *server) handleTCP(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return
	}
	if n, ok := bulkSize(line); ok {
		if _, err := io.CopyN(c, r, n); err != nil {
			return
		}
	}
	_, _ = io.WriteString(c, s.answer(c.RemoteAddr()))
}

func bulkSize(line string) (int64, bool) {
	v, ok := strings.CutPrefix(strings.TrimSpace(line), "bulk ")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n > 0 && n <= maxBulk
}

func (s *server) serveUDP(pc net.PacketConn) {
	buf := make([]byte, 2048)
	for {
		_, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		_, _ = pc.WriteTo([]byte(s.answer(from)), from)
	}
}

// bulkRequest is "bulk N\n" followed by N bytes.
func bulkRequest(n int64) string { return fmt.Sprintf("bulk %d\n", n) }
