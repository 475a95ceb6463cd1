package controller

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/fakestore"
)

func poolController(t *testing.T) *Controller {
	t.Helper()
	ctx := context.Background()
	m, err := ipam.New(ctx, fakestore.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range []ipam.Subnet{
		{Name: kubeovn.DefaultSubnet, CIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}, Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1")},
			Excludes: []ipam.Range{{First: netip.MustParseAddr("10.42.0.100"), Last: netip.MustParseAddr("10.42.0.110")}}},
		{Name: kubeovn.JoinSubnet, CIDRs: []netip.Prefix{netip.MustParsePrefix("100.64.0.0/16")}, Gateways: []netip.Addr{netip.MustParseAddr("100.64.0.1")}},
	} {
		if err := m.EnsureSubnet(ctx, sn); err != nil {
			t.Fatal(err)
		}
	}
	return &Controller{ipam: m}
}

func poolPins(t *testing.T, v string) annotation.Request {
	t.Helper()
	r, err := annotation.Requested(map[string]string{annotation.IPPool: v})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAllocateFromPool: pods with one ip_pool take its free entries in order, never one held
// by another pod; when all are held the error says the pool is exhausted, names it and the
// holders, and is retried (ErrExhausted); a released entry goes to the next pod. A pod asking
// again keeps its entry.
func TestAllocateFromPool(t *testing.T) {
	ctx := context.Background()
	c := poolController(t)
	pins := poolPins(t, "10.42.9.1,10.42.9.2,10.42.9.3")
	var got []string
	for _, name := range []string{"p1", "p2", "p3"} {
		a, err := c.allocateAddress(ctx, stsPod(name), kubeovn.DefaultSubnet, pins)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got = append(got, a.IPs[0].String())
	}
	if !slices.Equal(got, []string{"10.42.9.1", "10.42.9.2", "10.42.9.3"}) {
		t.Fatalf("pool pods got %v", got)
	}
	again, err := c.allocateAddress(ctx, stsPod("p2"), kubeovn.DefaultSubnet, pins)
	if err != nil || again.IPs[0].String() != "10.42.9.2" {
		t.Fatalf("p2 asking again: %v %v", again.IPs, err)
	}
	_, err = c.allocateAddress(ctx, stsPod("p4"), kubeovn.DefaultSubnet, pins)
	if !errors.Is(err, errPoolExhausted) || !errors.Is(err, ipam.ErrExhausted) ||
		!strings.Contains(err.Error(), `"10.42.9.1,10.42.9.2,10.42.9.3"`) || !strings.Contains(err.Error(), "10.42.9.2 by default/p2") {
		t.Fatalf("fourth pod: %v, want the pool named exhausted with its holders", err)
	}
	if err := c.ipam.ReleasePod(ctx, "default/p2"); err != nil {
		t.Fatal(err)
	}
	a, err := c.allocateAddress(ctx, stsPod("p4"), kubeovn.DefaultSubnet, pins)
	if err != nil || a.IPs[0].String() != "10.42.9.2" {
		t.Fatalf("fourth pod after a release: %v %v, want 10.42.9.2", a.IPs, err)
	}
}

// TestAllocateFromPoolStatefulSet: a StatefulSet's pods take the entry at their ordinal (as
// in Kube-OVN); an ordinal past the pool's end has none.
func TestAllocateFromPoolStatefulSet(t *testing.T) {
	ctx := context.Background()
	c := poolController(t)
	pins := poolPins(t, "10.42.9.1,10.42.9.2")
	a, err := c.allocateAddress(ctx, stsPod("web-1", webRef), kubeovn.DefaultSubnet, pins)
	if err != nil || a.IPs[0].String() != "10.42.9.2" {
		t.Fatalf("web-1: %v %v, want the second entry", a.IPs, err)
	}
	_, err = c.allocateAddress(ctx, stsPod("web-2", webRef), kubeovn.DefaultSubnet, pins)
	if !errors.Is(err, errPoolExhausted) || !strings.Contains(err.Error(), "ordinal 2 has none") {
		t.Fatalf("web-2: %v", err)
	}
}

// TestPinsRefused: a pin (ip_address, or any ip_pool entry) that the pod's subnet can never
// give is refused naming the address and why, and nothing is allocated; an ip_pool naming an
// IPPool object says edgeovn does not implement it.
func TestPinsRefused(t *testing.T) {
	ctx := context.Background()
	c := poolController(t)
	ip := func(s string) annotation.Request {
		return annotation.Request{IPs: []netip.Addr{netip.MustParseAddr(s)}}
	}
	tests := []struct {
		name string
		pins annotation.Request
		says []string
		is   error
	}{
		{"gateway", ip("10.42.0.1"), []string{"10.42.0.1", "gateway of subnet ovn-default"}, ipam.ErrGateway},
		{"excluded", ip("10.42.0.105"), []string{"10.42.0.105", "excluded range of subnet ovn-default"}, ipam.ErrExcluded},
		{"join network", ip("100.64.0.9"), []string{"100.64.0.9", "belongs to subnet join"}, ipam.ErrOutOfRange},
		{"pool entry on the gateway", poolPins(t, "10.42.9.1,10.42.0.1"), []string{annotation.IPPool, "10.42.0.1", "gateway"}, ipam.ErrGateway},
		{"pool entry excluded", poolPins(t, "10.42.0.101;10.42.9.1"), []string{"10.42.0.101", "excluded"}, ipam.ErrExcluded},
		{"pool entry on the join network", poolPins(t, "100.64.0.9"), []string{"100.64.0.9", "belongs to subnet join"}, ipam.ErrOutOfRange},
		{"pool names an IPPool object", poolPins(t, "my-pool"), []string{`"my-pool"`, "does not implement"}, nil},
	}
	for _, tt := range tests {
		_, err := c.allocateAddress(ctx, &corev1.Pod{}, kubeovn.DefaultSubnet, tt.pins)
		if err == nil || tt.is != nil && !errors.Is(err, tt.is) || errors.Is(err, ipam.ErrExhausted) || errors.Is(err, ipam.ErrConflict) {
			t.Errorf("%s: %v, want %v (not retried)", tt.name, err, tt.is)
			continue
		}
		for _, s := range tt.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", tt.name, err, s)
			}
		}
	}
	if n := len(c.ipam.Allocations()); n != 0 {
		t.Fatalf("refused pins allocated %d addresses: %v", n, c.ipam.Allocations())
	}
}

func TestHeldFirst(t *testing.T) {
	e := func(s ...string) []netip.Addr {
		var out []netip.Addr
		for _, x := range s {
			out = append(out, netip.MustParseAddr(x))
		}
		return out
	}
	entries := [][]netip.Addr{e("10.0.0.1"), e("10.0.0.2", "fd00::2"), e("10.0.0.3")}
	got := heldFirst(entries, e("10.0.0.2", "fd00::2"))
	if !slices.EqualFunc(got, [][]netip.Addr{e("10.0.0.2", "fd00::2"), e("10.0.0.1"), e("10.0.0.3")}, slices.Equal) {
		t.Errorf("heldFirst = %v", got)
	}
	if got := heldFirst(entries, e("10.0.0.2")); !slices.EqualFunc(got, entries, slices.Equal) {
		t.Errorf("a partly held entry moved: %v", got)
	}
	if !slices.EqualFunc(entries, [][]netip.Addr{e("10.0.0.1"), e("10.0.0.2", "fd00::2"), e("10.0.0.3")}, slices.Equal) {
		t.Errorf("heldFirst changed its input: %v", entries)
	}
}
