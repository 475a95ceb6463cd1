package ipam_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

func TestEnsureSubnetRejects(t *testing.T) {
	tests := []struct {
		name string
		s    ipam.Subnet
		want string
	}{
		{"no name", ipam.Subnet{CIDRs: prefixes("10.0.0.0/24")}, "without a name"},
		{"no cidr", ipam.Subnet{Name: "s"}, "one CIDR per family"},
		{"three cidrs", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24", "fd00::/64", "10.1.0.0/24")}, "one CIDR per family"},
		{"two ipv4", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24", "10.1.0.0/24")}, "of one family"},
		{"gateway outside", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.1.1")}, "not a host address"},
		{"gateway is broadcast", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.255")}, "not a host address"},
		{"gateway family missing", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("fd00::1")}, "do not match"},
		{"two gateways of a family", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1", "10.0.0.2")}, "at most one per family"},
		{"exclude outside", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"),
			Excludes: []ipam.Range{{First: netip.MustParseAddr("10.0.0.250"), Last: netip.MustParseAddr("10.0.1.5")}}}, "is outside"},
		{"exclude reversed", ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"),
			Excludes: []ipam.Range{{First: netip.MustParseAddr("10.0.0.9"), Last: netip.MustParseAddr("10.0.0.5")}}}, "ends before it starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, st := newIPAM(t)
			err := m.EnsureSubnet(context.Background(), tt.s)
			if !errors.Is(err, ipam.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrInvalid saying %q", err, tt.want)
			}
			if len(m.Subnets()) != 0 || commitCount(st) != 0 {
				t.Errorf("rejected subnet was stored")
			}
		})
	}
}

func TestEnsureSubnetUpdate(t *testing.T) {
	ctx := context.Background()
	base := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/30"), Gateways: addrs("10.0.0.1")}
	m, st := newIPAM(t, base)
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b")}); !errors.Is(err, ipam.ErrExhausted) {
		t.Fatalf("want exhausted /30, got %v", err)
	}

	commits := commitCount(st)
	must(t, m.EnsureSubnet(ctx, base))
	if commitCount(st) != commits {
		t.Error("unchanged subnet was written again")
	}

	for name, bad := range map[string]ipam.Subnet{
		"shrink away from a holder": {Name: "s", CIDRs: prefixes("10.0.0.4/30")},
		"gateway onto a holder":     {Name: "s", CIDRs: prefixes("10.0.0.0/30"), Gateways: addrs("10.0.0.2")},
		"drop the holder's family":  {Name: "s", CIDRs: prefixes("fd00::/64")},
	} {
		err := m.EnsureSubnet(ctx, bad)
		if !errors.Is(err, ipam.ErrConflict) || !strings.Contains(err.Error(), "default/a") {
			t.Errorf("%s: got %v, want ErrConflict naming default/a", name, err)
		}
	}
	if got := m.Subnets(); len(got) != 1 || !slices.Equal(got[0].CIDRs, base.CIDRs) {
		t.Fatalf("refused update changed the subnet: %+v", got)
	}

	// Grow, add a family, and exclude the holder's address: all allowed, the holder keeps it.
	grown := ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/29", "fd00::/126"), Gateways: addrs("10.0.0.1"),
		Excludes: []ipam.Range{rng(t, "10.0.0.2..10.0.0.3")}}
	must(t, m.EnsureSubnet(ctx, grown))
	if o, ok := m.Owner("s", a.IPs[0]); !ok || o != pod("a") {
		t.Errorf("excluded holder lost its address")
	}
	b, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b")})
	must(t, err)
	if want := addrs("10.0.0.4", "fd00::1"); !slices.Equal(b.IPs, want) {
		t.Errorf("after growing: got %v, want %v", b.IPs, want)
	}
	// The holder asks again and gains an address of the new family, keeping its IPv4.
	a2, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	if want := addrs("10.0.0.2", "fd00::2"); !slices.Equal(a2.IPs, want) {
		t.Errorf("top up: got %v, want %v", a2.IPs, want)
	}
	// Released, an excluded address is never handed out again.
	must(t, m.Release(ctx, pod("a")))
	for _, ip := range allocateAll(t, m, "s") {
		if ip == a.IPs[0] {
			t.Errorf("excluded address %s handed out after release", ip)
		}
	}
}

func TestDeleteSubnet(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24")})
	_, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	if err := m.DeleteSubnet(ctx, "s"); !errors.Is(err, ipam.ErrInUse) || !strings.Contains(err.Error(), "default/a") {
		t.Fatalf("got %v, want ErrInUse naming default/a", err)
	}
	must(t, m.ReleasePod(ctx, "default/a"))
	must(t, m.DeleteSubnet(ctx, "s"))
	must(t, m.DeleteSubnet(ctx, "s"))
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")}); !errors.Is(err, ipam.ErrUnknownSubnet) {
		t.Errorf("after delete: %v", err)
	}
}
