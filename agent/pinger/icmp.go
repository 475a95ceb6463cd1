package pinger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
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
	Targets  []netip.Addr // either family; duplicates are pinged once
	Count    int          // requests per target
	Interval time.Duration
	Timeout  time.Duration // wait for replies after the last request
}

// probe pings every target Count times, Interval apart, over one raw ICMP socket per family
// (ICMPv6 for IPv6 targets, both rounds at once), and returns the results by target.
func probe(ctx context.Context, req ProbeRequest) (map[netip.Addr]Result, error) {
	var v4, v6 []netip.Addr
	for _, a := range dedupe(req.Targets) {
		if a.Unmap().Is4() {
			v4 = append(v4, a.Unmap())
		} else {
			v6 = append(v6, a)
		}
	}
	out := make(map[netip.Addr]Result, len(v4)+len(v6))
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, f := range []struct {
		fam     icmpFamily
		targets []netip.Addr
	}{{icmpV4, v4}, {icmpV6, v6}} {
		if len(f.targets) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := probeFamily(ctx, f.fam, f.targets, req)
			mu.Lock()
			defer mu.Unlock()
			errs[i] = err
			maps.Copy(out, res)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// icmpFamily is what differs between pinging IPv4 and IPv6 addresses.
type icmpFamily struct {
	network, listen string
	proto           int // for icmp.ParseMessage
	echo, reply     icmp.Type
}

var (
	icmpV4 = icmpFamily{"ip4:icmp", "0.0.0.0", 1, ipv4.ICMPTypeEcho, ipv4.ICMPTypeEchoReply}
	icmpV6 = icmpFamily{"ip6:ipv6-icmp", "::", 58, ipv6.ICMPTypeEchoRequest, ipv6.ICMPTypeEchoReply}
)

// probeFamily is probe for targets of one family (deduplicated) over one raw socket.
func probeFamily(ctx context.Context, fam icmpFamily, targets []netip.Addr, req ProbeRequest) (map[netip.Addr]Result, error) {
	if len(targets)*req.Count > 1<<16 {
		return nil, fmt.Errorf("%d targets x %d requests exceed the 65536 sequence numbers", len(targets), req.Count)
	}
	conn, err := icmp.ListenPacket(fam.network, fam.listen)
	if err != nil {
		return nil, fmt.Errorf("open raw %s socket: %w", fam.network, err)
	}
	defer conn.Close()
	p := &round{id: rand.IntN(1 << 16), fam: fam, targets: targets, sentAt: make([]time.Time, len(targets)*req.Count),
		rtt: make([]time.Duration, len(targets)*req.Count)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.receive(conn) }()
	p.send(ctx, conn, req)
	_ = conn.SetReadDeadline(time.Now().Add(req.Timeout))
	wg.Wait()
	return p.results(req.Count), nil
}

// results sums each target's requests and replies.
func (p *round) results(count int) map[netip.Addr]Result {
	out := make(map[netip.Addr]Result, len(p.targets))
	for i, t := range p.targets {
		var r Result
		var sum time.Duration
		for c := range count {
			seq := c*len(p.targets) + i
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
	return out
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
	fam     icmpFamily
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
			msg := icmp.Message{Type: p.fam.echo, Body: &icmp.Echo{ID: p.id, Seq: seq, Data: []byte("edgeovn-pinger")}}
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
		msg, err := icmp.ParseMessage(p.fam.proto, buf[:n])
		if err != nil || msg.Type != p.fam.reply {
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
