package ipam_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
)

func itoa(i int) string               { return strconv.Itoa(i) }
func errorsIs(err, target error) bool { return errors.Is(err, target) }

func TestAllocateWholeSubnet(t *testing.T) {
	tests := []struct {
		name     string
		cidr     string
		gateway  string
		excludes []string
		want     []string
	}{
		{"ipv4 /29 skips network, gateway, broadcast", "10.0.0.0/29", "10.0.0.1", nil,
			[]string{"10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", "10.0.0.6"}},
		{"ipv4 /30 leaves one", "10.0.0.0/30", "10.0.0.1", nil, []string{"10.0.0.2"}},
		{"ipv4 /31 both are hosts", "10.0.0.0/31", "", nil, []string{"10.0.0.0", "10.0.0.1"}},
		{"ipv4 /31 with gateway", "10.0.0.0/31", "10.0.0.0", nil, []string{"10.0.0.1"}},
		{"ipv4 /32", "10.0.0.5/32", "", nil, []string{"10.0.0.5"}},
		{"ipv4 /32 taken by gateway", "10.0.0.5/32", "10.0.0.5", nil, nil},
		{"ipv6 /126 skips anycast, keeps last", "fd00::/126", "fd00::1", nil, []string{"fd00::2", "fd00::3"}},
		{"ipv6 /127 both are hosts", "fd00::/127", "", nil, []string{"fd00::", "fd00::1"}},
		{"ipv6 /128", "fd00::7/128", "", nil, []string{"fd00::7"}},
		{"excludes at range edges", "10.0.0.0/28", "10.0.0.1",
			[]string{"10.0.0.2", "10.0.0.14", "10.0.0.5..10.0.0.7"},
			[]string{"10.0.0.3", "10.0.0.4", "10.0.0.8", "10.0.0.9", "10.0.0.10", "10.0.0.11", "10.0.0.12", "10.0.0.13"}},
		{"overlapping excludes", "10.0.0.0/29", "10.0.0.1",
			[]string{"10.0.0.2..10.0.0.4", "10.0.0.3..10.0.0.5"}, []string{"10.0.0.6"}},
		{"everything excluded", "10.0.0.0/29", "", []string{"10.0.0.0..10.0.0.7"}, nil},
		{"ipv6 excludes at the top", "fd00::/125", "fd00::1", []string{"fd00::6..fd00::7"},
			[]string{"fd00::2", "fd00::3", "fd00::4", "fd00::5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ipam.Subnet{Name: "s", CIDRs: prefixes(tt.cidr)}
			if tt.gateway != "" {
				s.Gateways = addrs(tt.gateway)
			}
			for _, e := range tt.excludes {
				s.Excludes = append(s.Excludes, rng(t, e))
			}
			m, _ := newIPAM(t, s)
			got := allocateAll(t, m, "s")
			if !slices.Equal(got, addrs(tt.want...)) {
				t.Errorf("allocated %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAllocateStaticErrors(t *testing.T) {
	dual := ipam.Subnet{Name: "dual", CIDRs: prefixes("10.0.0.0/24", "fd00::/120"),
		Gateways: addrs("10.0.0.1", "fd00::1"), Excludes: []ipam.Range{{First: addrs("10.0.0.10")[0], Last: addrs("10.0.0.20")[0]}}}
	v4 := ipam.Subnet{Name: "v4", CIDRs: prefixes("10.1.0.0/24"), Gateways: addrs("10.1.0.1")}
	holderMAC := net.HardwareAddr{0x0a, 0, 0, 0, 0, 1}
	tests := []struct {
		name string
		req  ipam.Request
		want error
	}{
		{"unknown subnet", ipam.Request{Subnet: "nope", Owner: pod("a")}, ipam.ErrUnknownSubnet},
		{"outside cidr", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.1.5")}, ipam.ErrOutOfRange},
		{"network address", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.0")}, ipam.ErrOutOfRange},
		{"broadcast address", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.255")}, ipam.ErrOutOfRange},
		{"ipv6 anycast address", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("fd00::")}, ipam.ErrOutOfRange},
		{"family the subnet lacks", ipam.Request{Subnet: "v4", Owner: pod("a"), IPs: addrs("fd00::5")}, ipam.ErrOutOfRange},
		{"gateway", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.1")}, ipam.ErrGateway},
		{"ipv6 gateway", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("fd00::1")}, ipam.ErrGateway},
		{"excluded first", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.10")}, ipam.ErrExcluded},
		{"excluded last", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.20")}, ipam.ErrExcluded},
		{"held by another pod", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.50")}, ipam.ErrConflict},
		{"held by another interface", ipam.Request{Subnet: "dual", Owner: ipam.Owner{Pod: "default/holder", Interface: "net1"}, IPs: addrs("10.0.0.50")}, ipam.ErrConflict},
		{"mac held", ipam.Request{Subnet: "dual", Owner: pod("a"), MAC: holderMAC}, ipam.ErrConflict},
		{"two ipv4", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("10.0.0.30", "10.0.0.31")}, ipam.ErrInvalid},
		{"invalid address", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: []netip.Addr{{}}}, ipam.ErrInvalid},
		{"mapped address", ipam.Request{Subnet: "dual", Owner: pod("a"), IPs: addrs("::ffff:10.0.0.30")}, ipam.ErrInvalid},
		{"no pod", ipam.Request{Subnet: "dual", Owner: ipam.Owner{Interface: "eth0"}}, ipam.ErrInvalid},
		{"no interface", ipam.Request{Subnet: "dual", Owner: ipam.Owner{Pod: "default/a"}}, ipam.ErrInvalid},
		{"multicast mac", ipam.Request{Subnet: "dual", Owner: pod("a"), MAC: net.HardwareAddr{0x01, 0, 0, 0, 0, 1}}, ipam.ErrInvalid},
		{"short mac", ipam.Request{Subnet: "dual", Owner: pod("a"), MAC: net.HardwareAddr{0x0a, 0, 0}}, ipam.ErrInvalid},
		{"zero mac", ipam.Request{Subnet: "dual", Owner: pod("a"), MAC: make(net.HardwareAddr, 6)}, ipam.ErrInvalid},
		{"second family exhausted leaves first", ipam.Request{Subnet: "v4full", Owner: pod("a")}, ipam.ErrExhausted},
	}
	full := ipam.Subnet{Name: "v4full", CIDRs: prefixes("10.2.0.0/24", "fd02::/128"), Gateways: addrs("10.2.0.1", "fd02::")}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m, st := newIPAM(t, dual, v4, full)
			if _, err := m.Allocate(ctx, ipam.Request{Subnet: "dual", Owner: pod("holder"),
				IPs: addrs("10.0.0.50"), MAC: holderMAC}); err != nil {
				t.Fatal(err)
			}
			before, commits := m.Allocations(), commitCount(st)
			_, err := m.Allocate(ctx, tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if after := m.Allocations(); !equalAllocations(before, after) || commitCount(st) != commits {
				t.Errorf("failed request changed state: before %v, after %v", before, after)
			}
			// The next dynamic allocation is unaffected by the failed one.
			a, err := m.Allocate(ctx, ipam.Request{Subnet: "dual", Owner: pod("next")})
			if err != nil || a.IPs[0] != netip.MustParseAddr("10.0.0.2") {
				t.Errorf("next allocation: %v %v", a.IPs, err)
			}
		})
	}
}

func commitCount(st interface{ Commits() (int, int) }) int { c, _ := st.Commits(); return c }

func equalAllocations(a, b []ipam.Allocation) bool {
	return slices.EqualFunc(a, b, func(x, y ipam.Allocation) bool {
		return x.Subnet == y.Subnet && x.Owner == y.Owner && slices.Equal(x.IPs, y.IPs) &&
			x.MAC.String() == y.MAC.String() && x.Allocated.Equal(y.Allocated)
	})
}

func TestAllocateIdempotent(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24", "fd00::/64"), Gateways: addrs("10.0.0.1")})
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	if err != nil {
		t.Fatal(err)
	}
	commits := commitCount(st)
	for _, req := range []ipam.Request{
		{Subnet: "s", Owner: pod("a")},
		{Subnet: "s", Owner: pod("a"), IPs: a.IPs[:1]},
		{Subnet: "s", Owner: pod("a"), IPs: a.IPs, MAC: a.MAC},
	} {
		b, err := m.Allocate(ctx, req)
		if err != nil || !equalAllocations([]ipam.Allocation{a}, []ipam.Allocation{b}) {
			t.Errorf("request %+v again: got %+v, %v; want %+v", req, b, err, a)
		}
	}
	if commitCount(st) != commits {
		t.Errorf("idempotent requests wrote to the store")
	}
	if got, ok := m.Get(pod("a")); !ok || !slices.Equal(got.IPs, a.IPs) {
		t.Errorf("Get = %v %v", got, ok)
	}
	if o, ok := m.Owner("s", a.IPs[1]); !ok || o != pod("a") {
		t.Errorf("Owner(%s) = %v %v", a.IPs[1], o, ok)
	}
}

func TestDualStack(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("fd00::/120", "10.0.0.0/24"),
		Gateways: addrs("fd00::1", "10.0.0.1")})
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	if err != nil {
		t.Fatal(err)
	}
	if want := addrs("10.0.0.2", "fd00::2"); !slices.Equal(a.IPs, want) {
		t.Errorf("got %v, want %v (IPv4 first)", a.IPs, want)
	}
	b, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b"), IPs: addrs("fd00::99")})
	if err != nil {
		t.Fatal(err)
	}
	if want := addrs("10.0.0.3", "fd00::99"); !slices.Equal(b.IPs, want) {
		t.Errorf("static IPv6 only: got %v, want %v", b.IPs, want)
	}
}

func TestReleaseOrder(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/29"), Gateways: addrs("10.0.0.1")})
	for _, p := range []string{"a", "b", "c"} { // .2 .3 .4
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod(p)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"b", "a", "a"} { // releasing twice is fine
		if err := m.Release(ctx, pod(p)); err != nil {
			t.Fatal(err)
		}
	}
	// A restart must keep the order: build a second IPAM from the same store.
	m2, err := ipam.New(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]*ipam.IPAM{"live": m, "reloaded": m2} {
		var got []netip.Addr
		for i := 0; i < 4; i++ {
			a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("n" + itoa(i))})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a.IPs...)
		}
		if want := addrs("10.0.0.5", "10.0.0.6", "10.0.0.3", "10.0.0.2"); !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want never-used first, then least recently released: %v", name, got, want)
		}
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("x")}); !errors.Is(err, ipam.ErrExhausted) {
			t.Errorf("%s: want ErrExhausted, got %v", name, err)
		}
	}
}

func TestStaticTakesReleasedAddress(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/29"), Gateways: addrs("10.0.0.1")})
	for _, p := range []string{"a", "b"} {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod(p)}); err != nil {
			t.Fatal(err)
		}
	}
	must(t, m.Release(ctx, pod("a")))
	must(t, m.Release(ctx, pod("b")))
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("s"), IPs: addrs("10.0.0.2")}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("f"), IPs: addrs("10.0.0.5")}); err != nil {
		t.Fatal(err)
	}
	got := allocateAll(t, m, "s")
	if want := addrs("10.0.0.4", "10.0.0.6", "10.0.0.3"); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMAC(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/16")})
	seen := map[string]bool{}
	for i := 0; i < 500; i++ {
		a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod(itoa(i))})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.MAC) != 6 || a.MAC[0]&0x02 == 0 || a.MAC[0]&0x01 != 0 {
			t.Fatalf("mac %s is not locally administered unicast", a.MAC)
		}
		if seen[a.MAC.String()] {
			t.Fatalf("mac %s handed out twice", a.MAC)
		}
		seen[a.MAC.String()] = true
	}
	want := net.HardwareAddr{0x00, 0x00, 0x00, 0x12, 0x34, 0x56}
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("static"), MAC: want})
	if err != nil || a.MAC.String() != want.String() {
		t.Fatalf("requested mac: got %s, %v", a.MAC, err)
	}
	must(t, m.Release(ctx, pod("static")))
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("again"), MAC: want}); err != nil {
		t.Errorf("released mac not available again: %v", err)
	}
}

func TestReplaceAllocation(t *testing.T) {
	ctx := context.Background()
	m, _ := newIPAM(t,
		ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1")},
		ipam.Subnet{Name: "t", CIDRs: prefixes("10.1.0.0/24"), Gateways: addrs("10.1.0.1")})
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	b, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a"), IPs: addrs("10.0.0.77")})
	must(t, err)
	if b.IPs[0] != netip.MustParseAddr("10.0.0.77") || b.MAC.String() != a.MAC.String() {
		t.Errorf("static change: got %v %s, want 10.0.0.77 keeping mac %s", b.IPs, b.MAC, a.MAC)
	}
	if _, held := m.Owner("s", a.IPs[0]); held {
		t.Errorf("old address %s still held", a.IPs[0])
	}
	c, err := m.Allocate(ctx, ipam.Request{Subnet: "t", Owner: pod("a")})
	must(t, err)
	if c.Subnet != "t" || c.IPs[0] != netip.MustParseAddr("10.1.0.2") {
		t.Errorf("subnet change: got %+v", c)
	}
	if _, held := m.Owner("s", b.IPs[0]); held || len(m.Allocations()) != 1 {
		t.Errorf("subnet change left %v behind", m.Allocations())
	}
}

func TestReleasePod(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24")})
	for _, o := range []ipam.Owner{{Pod: "ns/a", Interface: "eth0"}, {Pod: "ns/a", Interface: "net1"}, {Pod: "ns/b", Interface: "eth0"}} {
		_, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: o})
		must(t, err)
	}
	must(t, m.ReleasePod(ctx, "ns/a"))
	got := m.Allocations()
	if len(got) != 1 || got[0].Owner.Pod != "ns/b" {
		t.Errorf("after ReleasePod: %v", got)
	}
	commits := commitCount(st)
	must(t, m.ReleasePod(ctx, "ns/a"))
	must(t, m.Release(ctx, ipam.Owner{Pod: "ns/zz", Interface: "eth0"}))
	if commitCount(st) != commits {
		t.Errorf("releasing nothing wrote to the store")
	}
}

func TestStoreFailureLosesNothing(t *testing.T) {
	ctx := context.Background()
	m, st := newIPAM(t, ipam.Subnet{Name: "s", CIDRs: prefixes("10.0.0.0/24"), Gateways: addrs("10.0.0.1")})
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("a")})
	must(t, err)
	st.FailNext(1)
	if _, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b")}); err == nil {
		t.Fatal("allocation succeeded although the store failed")
	}
	if _, ok := m.Get(pod("b")); ok {
		t.Error("allocation that was not durable is visible")
	}
	st.FailNext(1)
	if err := m.Release(ctx, pod("a")); err == nil {
		t.Fatal("release succeeded although the store failed")
	}
	if got, ok := m.Get(pod("a")); !ok || got.IPs[0] != a.IPs[0] {
		t.Errorf("failed release lost the allocation: %v %v", got, ok)
	}
	b, err := m.Allocate(ctx, ipam.Request{Subnet: "s", Owner: pod("b")})
	if err != nil || b.IPs[0] != netip.MustParseAddr("10.0.0.3") {
		t.Errorf("after recovery: %v %v", b.IPs, err)
	}
}
