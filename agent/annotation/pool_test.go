package annotation

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// TestParsePool reads Kube-OVN's forms of ip_pool, from its "Fixed Addresses" guide and its
// controller's reading of them.
func TestParsePool(t *testing.T) {
	cases := []struct {
		in      string
		entries [][]netip.Addr
		name    string
	}{
		{"10.16.0.15,10.16.0.16,10.16.0.17", [][]netip.Addr{addrs("10.16.0.15"), addrs("10.16.0.16"), addrs("10.16.0.17")}, ""},
		{" 10.16.0.15 , 10.16.0.16 ", [][]netip.Addr{addrs("10.16.0.15"), addrs("10.16.0.16")}, ""},
		{"10.16.0.15", [][]netip.Addr{addrs("10.16.0.15")}, ""},
		{"fd00:10:16::e,fd00:10:16::f", [][]netip.Addr{addrs("fd00:10:16::e"), addrs("fd00:10:16::f")}, ""},
		// Two addresses of different families: one dual-stack entry.
		{"10.16.0.15,fd00:10:16::000E", [][]netip.Addr{addrs("10.16.0.15", "fd00:10:16::e")}, ""},
		{"fd00:10:16::e,10.16.0.15", [][]netip.Addr{addrs("10.16.0.15", "fd00:10:16::e")}, ""},
		// The guide's dual-stack pool.
		{"10.16.0.15,fd00:10:16::000E;10.16.0.16,fd00:10:16::000F;10.16.0.17,fd00:10:16::0010",
			[][]netip.Addr{addrs("10.16.0.15", "fd00:10:16::e"), addrs("10.16.0.16", "fd00:10:16::f"), addrs("10.16.0.17", "fd00:10:16::10")}, ""},
		{"10.16.0.15;10.16.0.16", [][]netip.Addr{addrs("10.16.0.15"), addrs("10.16.0.16")}, ""},
		{"my-pool", nil, "my-pool"},
		{"pool.v1", nil, "pool.v1"},
	}
	for _, c := range cases {
		p, err := ParsePool(c.in)
		if err != nil {
			t.Errorf("ParsePool(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(p.Entries, c.entries) || p.Name != c.name || p.Value != c.in {
			t.Errorf("ParsePool(%q) = %+v, want entries %v name %q", c.in, p, c.entries, c.name)
		}
	}
}

// TestParsePoolErrors: bad values get an error that names the annotation and the bad part.
func TestParsePoolErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty"},
		{"   ", "empty"},
		{"10.16.0.15,,10.16.0.16", "empty entry"},
		{"10.16.0.15,", "empty entry"},
		{"10.16.0.300,10.16.0.16", `"10.16.0.300" is not an IP address`},
		{"10.16.0.15,nope", `"nope" is not an IP address`},
		{"10.16.0.15;", "empty entry"},
		{"10.16.0.15,10.16.0.16;10.16.0.17", `entry "10.16.0.15,10.16.0.16": at most one address per family`},
		{"10.16.0.15,fd00::1,fd00::2;10.16.0.17", "at most one address per family"},
		{"fe80::1%eth0", "not a plain IPv4 or IPv6 address"},
		{"::ffff:10.0.0.1", "not a plain IPv4 or IPv6 address"},
		{"Bad_Pool", "neither addresses nor an IPPool name"},
		{"10.0.0.X", `"10.0.0.X" is not an IP address`},
		{"bad_pool", "neither addresses nor an IPPool name"},
	}
	for _, c := range cases {
		p, err := ParsePool(c.in)
		if err == nil {
			t.Errorf("ParsePool(%q) = %+v, want an error", c.in, p)
			continue
		}
		if !strings.Contains(err.Error(), IPPool) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePool(%q): %v, want it to name %s and say %q", c.in, err, IPPool, c.want)
		}
	}
}

// TestRequestedPool: ip_pool is read with the other pins; a bad one is an error naming it; an
// empty one is no pool.
func TestRequestedPool(t *testing.T) {
	r, err := Requested(map[string]string{IPPool: "10.42.9.1,10.42.9.2", MACAddress: "0a:00:00:00:09:09"})
	if err != nil || len(r.Pool.Entries) != 2 || r.MAC == nil || len(r.IPs) != 0 {
		t.Fatalf("Requested = %+v, %v", r, err)
	}
	if r, err := Requested(map[string]string{IPPool: ""}); err != nil || !r.Pool.Empty() {
		t.Fatalf("empty ip_pool: %+v, %v", r, err)
	}
	if _, err := Requested(map[string]string{IPPool: "10.42.9.1,x.y"}); err == nil || !strings.Contains(err.Error(), IPPool) ||
		!strings.Contains(err.Error(), "x.y") {
		t.Fatalf("bad ip_pool: %v", err)
	}
	if got := (Pool{Entries: [][]netip.Addr{addrs("10.0.0.1", "fd00::1"), addrs("10.0.0.2")}}).Addrs(); len(got) != 3 {
		t.Fatalf("Addrs = %v", got)
	}
}
