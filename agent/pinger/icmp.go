package pinger

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
)

// Result is what the pings to one address got.
type Result struct {
	Sent, Received int
	// RTT is the mean round trip of the replies (zero without any).
	RTT time.Duration
}

// Lost is the requests without a reply.
func (r Result) Lost() int { return r.Sent - r.Received }

// ProbeRequest says how probe pings.
type ProbeRequest struct {
	Targets  []netip.Addr // IPv4; duplicates are pinged once
	Count    int          // requests per target
	Interval time.Duration
	Timeout  time.Duration // wait for replies after the last request
}

// probe pings every target Count times, Interval apart, over one raw ICMP socket, and
// returns the results by target.
func probe(ctx context.Context, req ProbeRequest) (map[netip.Addr]Result, error) {
	targets := dedupe(req.Targets)
	out := make(map[netip.Addr]Result, len(targets))
	if len(targets) == 0 {
		return out, nil
	}
	if len(targets)*req.Count > 1<<16 {
		return nil, fmt.Errorf("%d targets x %d requests exceed the 65536 sequence numbers", len(targets), req.Count)
	}
	conn, err := icmp.ListenPacket("ip4:icmp", "0.0.0.0")
	if err != nil {
		return nil, fmt.Errorf("open raw icmp socket: %w", err)
	}
	defer conn.Close()
	p := &round{id: rand.IntN(1 << 16), targets: targets, sentAt: make([]time.Time, len(targets)*req.Count),
		rtt: make([]time.Duration, len(targets)*req.Count)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.receive(conn) }()
	p.send(ctx, conn, req)
	_ = conn.SetReadDeadline(time.Now().Add(req.Timeout))
	wg.Wait()
	for i, t := range targets {
		var r Result
		var sum time.Duration
		for c := range req.Count {
			seq := c*len(targets) + i
			if p.sentAt[seq].IsZero() {
				continue
			}
			r.Sent++
			if d := p.rtt[seq]; d > 0 {
				r.Received++
				sum += d
			}
		}
		if r.Received > 0 {
			r.RTT = sum / time.Duration(r.Received)
		}
		out[t] = r
	}
	return out, nil
}

// A pass over the targets sends sendBurst requests, then pauses burstPause: 1,000 targets
// take about 60 ms, within the 100 ms between passes.
const (
	sendBurst  = 32
	burstPause = 2 * time.Millisecond
)

// round is one probe's state: request seq is target seq % len(targets), attempt seq / len.
type round struct {
	id      int
	targets []netip.Addr
	mu      sync.Mutex
	sentAt  []time.Time
	rtt     []time.Duration
}

func (p *round) send(ctx context.Context, conn *icmp.PacketConn, req ProbeRequest) {
	for c := range req.Count {
		if c > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(req.Interval):
			}
		}
		for i, t := range p.targets {
			if i > 0 && i%sendBurst == 0 {
				// Paced: a burst of replies larger than the socket's receive buffer (about
				// 200 of them) would be dropped there and counted as loss.
				time.Sleep(burstPause)
			}
			seq := c*len(p.targets) + i
			msg := icmp.Message{Type: ipv4.ICMPTypeEcho, Body: &icmp.Echo{ID: p.id, Seq: seq, Data: []byte("edgeovn-pinger")}}
			b, err := msg.Marshal(nil)
			if err != nil {
				continue
			}
			p.mu.Lock()
			p.sentAt[seq] = time.Now()
			p.mu.Unlock()
			if _, err := conn.WriteTo(b, &net.IPAddr{IP: t.AsSlice()}); err != nil {
				p.mu.Lock()
				p.sentAt[seq] = time.Time{} // not sent: neither sent nor lost (a local error)
				p.mu.Unlock()
			}
		}
	}
}

// receive reads replies until the socket's deadline (set after the last request).
func (p *round) receive(conn *icmp.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return
			}
			if n == 0 {
				return
			}
		}
		now := time.Now()
		msg, err := icmp.ParseMessage(1, buf[:n])
		if err != nil || msg.Type != ipv4.ICMPTypeEchoReply {
			continue
		}
		echo, ok := msg.Body.(*icmp.Echo)
		if !ok || echo.ID != p.id || echo.Seq >= len(p.sentAt) {
			continue
		}
		src, ok := from.(*net.IPAddr)
		if !ok {
			continue
		}
		addr, _ := netip.AddrFromSlice(src.IP)
		if addr.Unmap() != p.targets[echo.Seq%len(p.targets)] {
			continue
		}
		p.mu.Lock()
		if sent := p.sentAt[echo.Seq]; !sent.IsZero() && p.rtt[echo.Seq] == 0 {
			p.rtt[echo.Seq] = max(now.Sub(sent), time.Nanosecond)
		}
		p.mu.Unlock()
	}
}

func dedupe(in []netip.Addr) []netip.Addr {
	seen := make(map[netip.Addr]bool, len(in))
	var out []netip.Addr
	for _, a := range in {
		if a.IsValid() && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
