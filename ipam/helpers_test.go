package ipam_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/fakestore"
)

func newIPAM(t testing.TB, subnets ...ipam.Subnet) (*ipam.IPAM, *fakestore.Store) {
	t.Helper()
	st := fakestore.New()
	m, err := ipam.New(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subnets {
		if err := m.EnsureSubnet(context.Background(), s); err != nil {
			t.Fatalf("ensure subnet %s: %v", s.Name, err)
		}
	}
	return m, st
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func rng(t testing.TB, s string) ipam.Range {
	t.Helper()
	r, err := ipam.ParseRange(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func pod(name string) ipam.Owner { return ipam.Owner{Pod: "default/" + name, Interface: "eth0"} }

// allocateAll allocates until the subnet is exhausted and returns the addresses in order.
func allocateAll(t *testing.T, m *ipam.IPAM, subnet string) []netip.Addr {
	t.Helper()
	var got []netip.Addr
	for i := 0; ; i++ {
		a, err := m.Allocate(context.Background(), ipam.Request{Subnet: subnet,
			Owner: ipam.Owner{Pod: "ns/p" + itoa(i), Interface: "eth0"}})
		if err != nil {
			if !errorsIs(err, ipam.ErrExhausted) {
				t.Fatalf("allocation %d: want ErrExhausted at the end, got %v", i, err)
			}
			return got
		}
		got = append(got, a.IPs...)
		if i > 1000 {
			t.Fatal("subnet never exhausted")
		}
	}
}

// stateStore is a Store that loads a fixed State, however inconsistent, and accepts every
// commit without keeping it: for tests and benchmarks of loading alone.
type stateStore struct{ st ipam.State }

func (s stateStore) Load(context.Context) (ipam.State, error)    { return s.st, nil }
func (s stateStore) Commit(context.Context, []ipam.Change) error { return nil }
