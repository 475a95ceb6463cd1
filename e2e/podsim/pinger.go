package podsim

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/icmp"
)

// Pinger sends ICMP echo requests from a pod at a fixed interval and counts the replies, for
// as long as a test runs (ping(8) counts a request in flight when it is interrupted as lost;
// Stop here waits for the last replies first).
type Pinger struct {
	conn     *icmp.PacketConn
	dst      *net.IPAddr
	id       int
	interval time.Duration

	mu       sync.Mutex
	sent     int
	sentAt   []time.Time  // by sequence number
	received map[int]bool // by sequence number (mod 2^16: fine below 10 minutes at 10 ms)
	stop     chan struct{}
	done     sync.WaitGroup
}

// PingStats is what a Pinger counted.
type PingStats struct {
	Sent, Received int
	Lost           []int    // sequence numbers never answered
	Outages        []Outage // runs of consecutive lost requests, in order
}

// Outage is a run of consecutive requests never answered: From is when the first of them was
// sent, To when the next answered one was (or the last request, when none was answered after).
type Outage struct {
	From, To time.Time
	Lost     int
}

// Duration is how long no request sent got an answer.
func (o Outage) Duration() time.Duration { return o.To.Sub(o.From) }

// Longest is the longest outage, zero when nothing was lost.
func (st PingStats) Longest() Outage {
	var best Outage
	for _, o := range st.Outages {
		if o.Duration() > best.Duration() || best.Lost == 0 {
			best = o
		}
	}
	return best
}

// StartPinger starts pinging dst from the pod every interval.
func StartPinger(from *Sandbox, dst netip.Addr, interval time.Duration) (*Pinger, error) {
	p := &Pinger{dst: &net.IPAddr{IP: dst.AsSlice()}, id: rand.IntN(1 << 16), interval: interval,
		received: map[int]bool{}, stop: make(chan struct{})}
	err := inNetns(from.Netns, func() (err error) {
		p.conn, err = icmp.ListenPacket("ip4:icmp", from.IP().String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open icmp socket in pod %s: %w", from.Pod.Name, err)
	}
	p.done.Add(2)
	go p.send()
	go p.receive()
	return p, nil
}

func (p *Pinger) send() {
	defer p.done.Done()
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for seq := 0; ; seq++ {
		b, _ := marshalEcho(1, p.id, seq)
		p.mu.Lock()
		p.sent++
		p.sentAt = append(p.sentAt, time.Now())
		p.mu.Unlock()
		_, _ = p.conn.WriteTo(b, p.dst) // a failed send is a request never answered
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

func (p *Pinger) receive() {
	defer p.done.Done()
	buf := make([]byte, 1500)
	for {
		n, _, err := p.conn.ReadFrom(buf)
		if err != nil {
			return // closed by Stop
		}
		if seq, ok := echoReplySeq(1, buf[:n], p.id); ok {
			p.mu.Lock()
			p.received[seq] = true
			p.mu.Unlock()
		}
	}
}

// Stop stops sending, waits a second for the last replies, and returns the counts.
func (p *Pinger) Stop() PingStats {
	close(p.stop)
	time.Sleep(time.Second)
	p.conn.Close()
	p.done.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := PingStats{Sent: p.sent, Received: len(p.received)}
	for seq := range p.sent {
		if !p.received[seq&0xffff] {
			st.Lost = append(st.Lost, seq)
		}
	}
	st.Outages = outages(st.Lost, p.sentAt)
	return st
}

// outages groups sorted lost sequence numbers into runs, timed by when each was sent.
func outages(lost []int, sentAt []time.Time) []Outage {
	var out []Outage
	for i, seq := range lost {
		if i > 0 && seq == lost[i-1]+1 {
			o := &out[len(out)-1]
			o.Lost++
			o.To = sentAt[min(seq+1, len(sentAt)-1)]
			continue
		}
		out = append(out, Outage{From: sentAt[seq], To: sentAt[min(seq+1, len(sentAt)-1)], Lost: 1})
	}
	return out
}
