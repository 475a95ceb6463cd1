package ipam_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

func pools(t testing.TB, spec map[string][]string) []ipam.IPPool {
	t.Helper()
	var out []ipam.IPPool
	for name, ips := range spec {
		rs, err := ipam.ParsePoolIPs(ips)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ipam.IPPool{Name: name, Ranges: rs})
	}
	return out
}

// allocateFrom allocates until exhaustion from pool (or pool-less with "") and returns the
// addresses in order.
func allocateFrom(t *testing.T, m *ipam.IPAM, pool, prefix string) []string {
	t.Helper()
	var got []string
	for i := 0; i < 300; i++ {
		a, err := m.Allocate(context.Background(), ipam.Request{Subnet: "s", Pool: pool,
			Owner: ipam.Owner{Pod: "ns/" + prefix + itoa(i), Interface: "eth0"}})
		if errors.Is(err, ipam.ErrExhausted) {
			return got
		}
		if err != nil {
			t.Fatalf("allocate from pool %q: %v", pool, err)
		}
		for _, ip := range a.IPs {
			got = append(got, ip.String())
		}
	}
	t.Fatal("never exhausted")
	return nil
}

func TestPoolsPartitionTheSubnet(t *testing.T) {
	s := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/28"), Gateways: addrs("10.0.0.1"),
		Excludes: []ipam.Range{rng(t, "10.0.0.5")},
		Pools:    pools(t, map[string][]string{"db": {"10.0.0.4..10.0.0.6"}, "web": {"10.0.0.12/30"}})}
	m, _ := newIPAM(t, s)
	tests := []struct {
		pool string
		want []string
	}{
		// 10.0.0.5 is excluded; 10.0.0.15 is the broadcast address.
		{"db", []string{"10.0.0.4", "10.0.0.6"}},
		{"web", []string{"10.0.0.12", "10.0.0.13", "10.0.0.14"}},
		{"", []string{"10.0.0.2", "10.0.0.3", "10.0.0.7", "10.0.0.8", "10.0.0.9", "10.0.0.10", "10.0.0.11"}},
	}
	for _, tt := range tests {
		if got := allocateFrom(t, m, tt.pool, "p"+tt.pool); !slices.Equal(got, tt.want) {
			t.Errorf("pool %q: got %v, want %v", tt.pool, got, tt.want)
		}
	}
}

func TestPoolDualStackFamilyOutsidePool(t *testing.T) {
	s := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/29", "fd00::/125"), Gateways: addrs("10.0.0.1", "fd00::1"),
		Pools: pools(t, map[string][]string{"v4only": {"10.0.0.6"}})}
	m, _ := newIPAM(t, s)
	a, err := m.Allocate(context.Background(), ipam.Request{Subnet: "s", Pool: "v4only", Owner: pod("a")})
	must(t, err)
	if want := addrs("10.0.0.6", "fd00::2"); !slices.Equal(a.IPs, want) {
		t.Errorf("got %v, want %v (IPv6 from outside every pool)", a.IPs, want)
	}
	b, err := m.Allocate(context.Background(), ipam.Request{Subnet: "s", Owner: pod("b")})
	must(t, err)
	if want := addrs("10.0.0.2", "fd00::3"); !slices.Equal(b.IPs, want) {
		t.Errorf("pool-less: got %v, want %v", b.IPs, want)
	}
}

func TestPoolRequests(t *testing.T) {
	s := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1"),
		Pools: pools(t, map[string][]string{"db": {"10.0.0.100..10.0.0.109"}})}
	tests := []struct {
		name   string
		req    ipam.Request
		want   string
		target error
	}{
		{"unknown pool", ipam.Request{Pool: "nope"}, "", ipam.ErrUnknownPool},
		{"static inside pool", ipam.Request{Pool: "db", IPs: addrs("10.0.0.105")}, "10.0.0.105", nil},
		{"static outside pool", ipam.Request{Pool: "db", IPs: addrs("10.0.0.50")}, "", ipam.ErrOutOfRange},
		{"static gateway in pool request", ipam.Request{Pool: "db", IPs: addrs("10.0.0.1")}, "", ipam.ErrGateway},
		{"pool-less static may name a pool address", ipam.Request{IPs: addrs("10.0.0.107")}, "10.0.0.107", nil},
		{"dynamic from pool", ipam.Request{Pool: "db"}, "10.0.0.100", nil},
		{"dynamic pool-less avoids the pool", ipam.Request{}, "10.0.0.2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newIPAM(t, s)
			tt.req.Subnet, tt.req.Owner = "s", pod("a")
			a, err := m.Allocate(context.Background(), tt.req)
			if tt.target != nil {
				if !errors.Is(err, tt.target) {
					t.Fatalf("got %v, %v; want %v", a, err, tt.target)
				}
				if len(m.Allocations()) != 0 {
					t.Errorf("a refused request left %v", m.Allocations())
				}
				return
			}
			must(t, err)
			if a.IPs[0].String() != tt.want {
				t.Errorf("got %v, want %s", a.IPs, tt.want)
			}
		})
	}
}

func TestPoolIdempotentAndMoves(t *testing.T) {
	ctx := context.Background()
	s := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1"),
		Pools: pools(t, map[string][]string{"db": {"10.0.0.100..10.0.0.109"}})}
	m, st := newIPAM(t, s)
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	again, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	if !slices.Equal(a.IPs, again.IPs) {
		t.Errorf("asking again moved %v to %v", a.IPs, again.IPs)
	}
	moved, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a"), Pool: "db"})
	must(t, err)
	if moved.IPs[0].String() != "10.0.0.100" {
		t.Errorf("asking for pool db: got %v", moved.IPs)
	}
	released, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b"), Pool: "db"})
	must(t, err)
	if released.IPs[0].String() != "10.0.0.101" {
		t.Errorf("second from pool db: got %v", released.IPs)
	}
	// The pool survives a reload, and its released addresses stay in it.
	must(t, m.Release(ctx, pod("a")))
	m2, err := ipam.New(ctx, st, nil)
	must(t, err)
	if got := m2.Subnets()[0].Pools; len(got) != 1 || got[0].Name != "db" {
		t.Errorf("pools after reload: %v", got)
	}
	c, err := m2.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("c")})
	must(t, err)
	if c.IPs[0].String() == "10.0.0.100" {
		t.Errorf("pool-less request got the pool's released address %v", c.IPs)
	}
}

func TestPoolValidation(t *testing.T) {
	base := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24", "fd00::/120"), Gateways: addrs("10.0.0.1")}
	tests := []struct {
		name  string
		pools []ipam.IPPool
	}{
		{"no name", []ipam.IPPool{{Ranges: []ipam.Range{rng(t, "10.0.0.5")}}}},
		{"no ranges", []ipam.IPPool{{Name: "a"}}},
		{"twice", []ipam.IPPool{{Name: "a", Ranges: []ipam.Range{rng(t, "10.0.0.5")}}, {Name: "a", Ranges: []ipam.Range{rng(t, "10.0.0.6")}}}},
		{"outside", []ipam.IPPool{{Name: "a", Ranges: []ipam.Range{rng(t, "10.0.1.5")}}}},
		{"straddles the edge", []ipam.IPPool{{Name: "a", Ranges: []ipam.Range{rng(t, "10.0.0.250..10.0.1.5")}}}},
		{"overlap", pools(t, map[string][]string{"a": {"10.0.0.10..10.0.0.20"}, "b": {"10.0.0.20/30"}})},
		{"overlap ipv6", pools(t, map[string][]string{"a": {"fd00::10..fd00::20"}, "b": {"fd00::15"}})},
		{"reversed range", []ipam.IPPool{{Name: "a", Ranges: []ipam.Range{{First: addrs("10.0.0.9")[0], Last: addrs("10.0.0.3")[0]}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newIPAM(t, base)
			s := base
			s.Pools = tt.pools
			if err := m.EnsureSubnet(context.Background(), s); !errors.Is(err, ipam.ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
			if got := m.Subnets()[0]; len(got.Pools) != 0 {
				t.Errorf("a refused spec left pools %v", got.Pools)
			}
		})
	}
}

func TestPoolChangeKeepsOwners(t *testing.T) {
	ctx := context.Background()
	s := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/28"), Gateways: addrs("10.0.0.1")}
	m, _ := newIPAM(t, s)
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	s.Pools = pools(t, map[string][]string{"p": {"10.0.0.2..10.0.0.3"}})
	must(t, m.EnsureSubnet(ctx, s))
	if o, ok := m.Owner("s", a.IPs[0]); !ok || o != pod("a") {
		t.Errorf("owner of %s after adding a pool over it: %v %v", a.IPs[0], o, ok)
	}
	b, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b"), Pool: "p"})
	must(t, err)
	if b.IPs[0].String() != "10.0.0.3" {
		t.Errorf("from the new pool: got %v, want 10.0.0.3 (10.0.0.2 is held)", b.IPs)
	}
}

func TestParsePoolIPs(t *testing.T) {
	tests := []struct {
		in   []string
		want []string
		err  bool
	}{
		{in: []string{"10.0.0.5", "10.0.0.10..10.0.0.20", "10.0.1.0/30"}, want: []string{"10.0.0.5", "10.0.0.10..10.0.0.20", "10.0.1.0..10.0.1.3"}},
		{in: []string{"fd00::/126"}, want: []string{"fd00::..fd00::3"}},
		{in: []string{"10.0.0.1/33"}, err: true},
		{in: []string{"nonsense"}, err: true},
		{in: []string{"10.0.0.9..10.0.0.1"}, err: true},
	}
	for _, tt := range tests {
		rs, err := ipam.ParsePoolIPs(tt.in)
		if tt.err {
			if !errors.Is(err, ipam.ErrInvalid) {
				t.Errorf("ParsePoolIPs(%q) = %v, %v; want ErrInvalid", tt.in, rs, err)
			}
			continue
		}
		var got []string
		for _, r := range rs {
			got = append(got, r.String())
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParsePoolIPs(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func FuzzParsePoolIPs(f *testing.F) {
	for _, s := range []string{"10.0.0.5", "10.0.0.10..10.0.0.20", "10.0.0.0/24", "fd00::/64", "1/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ipam.ParsePoolIPs([]string{s})
		if err != nil {
			if !errors.Is(err, ipam.ErrInvalid) {
				t.Fatalf("ParsePoolIPs(%q): error %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		for _, r := range rs {
			if r.First.Compare(r.Last) > 0 || r.First.BitLen() != r.Last.BitLen() {
				t.Fatalf("ParsePoolIPs(%q) = %v: not a valid range", s, r)
			}
		}
	})
}
