package pinger

import (
	"context"
	"net"
	"net/netip"
	"os"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// serveDNS answers every A question on addr:53 (UDP) with answer, until the test ends.
func serveDNS(t *testing.T, addr netip.Addr, answer [4]byte) {
	t.Helper()
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 53)))
	if err != nil {
		t.Skipf("cannot serve DNS on %s:53: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := conn.ReadFromUDP(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if q.Type == dnsmessage.TypeA {
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 5}, dnsmessage.AResource{A: answer})
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = conn.WriteToUDP(msg, from)
			}
		}
	}()
}

// TestLookupThroughClusterDNS: the internal name is made fully qualified and asked of the
// given server (not the host's resolv.conf); a server that does not answer is an error.
func TestLookupThroughClusterDNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("port 53 needs root")
	}
	server := netip.MustParseAddr("127.53.0.1")
	serveDNS(t, server, [4]byte{10, 43, 0, 1})
	r := lookup(context.Background(), server, clusterName("kubernetes.default"))
	if r.Err != nil || r.Name != "kubernetes.default.svc.cluster.local" || len(r.Addrs) != 1 || r.Addrs[0] != "10.43.0.1" {
		t.Fatalf("lookup: %+v", r)
	}
	if r := lookup(context.Background(), netip.MustParseAddr("127.53.0.2"), "kubernetes.default.svc.cluster.local"); r.Err == nil {
		t.Fatalf("a server that does not answer: %+v, want an error", r)
	}
}

func TestClusterName(t *testing.T) {
	for in, want := range map[string]string{"kubernetes.default": "kubernetes.default.svc.cluster.local",
		"kubernetes": "kubernetes.svc.cluster.local", "example.com.": "example.com.", "a.b.svc.cluster.local": "a.b.svc.cluster.local",
		"www.example.com": "www.example.com"} {
		if got := clusterName(in); got != want {
			t.Errorf("clusterName(%q) = %q, want %q", in, got, want)
		}
	}
}
