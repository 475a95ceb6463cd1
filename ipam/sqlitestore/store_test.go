package sqlitestore_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

var testSubnet = ipam.Subnet{Name: "ovn-default",
	CIDRs:    []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16"), netip.MustParsePrefix("fd00:42::/112")},
	Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1"), netip.MustParseAddr("fd00:42::1")},
	Excludes: []ipam.Range{{First: netip.MustParseAddr("10.42.0.2"), Last: netip.MustParseAddr("10.42.0.9")}}}

func open(t testing.TB, path string) (*sqlitestore.Store, *ipam.IPAM) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ipam.New(context.Background(), st, nil)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, m
}

func owner(name string) ipam.Owner { return ipam.Owner{Pod: "default/" + name, Interface: "eth0"} }

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "dir", "ipam.db") // directories are created
	st, m := open(t, path)
	if err := m.EnsureSubnet(ctx, testSubnet); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if _, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner(n)}); err != nil {
			t.Fatal(err)
		}
	}
	static := ipam.Request{Subnet: testSubnet.Name, Owner: ipam.Owner{Pod: "kube-system/dns", Interface: "net1"},
		IPs: []netip.Addr{netip.MustParseAddr("10.42.7.7")}, MAC: net.HardwareAddr{0, 0, 0, 1, 2, 3}}
	if _, err := m.Allocate(ctx, static); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"c", "a"} {
		if err := m.Release(ctx, owner(n)); err != nil {
			t.Fatal(err)
		}
	}
	want := m.Allocations()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, m = open(t, path)
	defer st.Close()
	got := m.Allocations()
	if !equal(got, want) {
		t.Fatalf("after reopen:\n got %v\nwant %v", got, want)
	}
	if s := m.Subnets(); len(s) != 1 || !slices.Equal(s[0].Excludes, testSubnet.Excludes) || !slices.Equal(s[0].CIDRs, testSubnet.CIDRs) {
		t.Errorf("subnet after reopen: %+v", s)
	}
	// The released addresses are remembered: never-used ones come first, then c's, then a's.
	var next []string
	for i := 0; i < 2; i++ {
		a, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner("n" + string(rune('0'+i)))})
		if err != nil {
			t.Fatal(err)
		}
		next = append(next, a.IPs[0].String())
	}
	if want := []string{"10.42.0.14", "10.42.0.15"}; !slices.Equal(next, want) {
		t.Errorf("after reopen, allocated %v, want never-used %v", next, want)
	}
}

func equal(a, b []ipam.Allocation) bool {
	return slices.EqualFunc(a, b, func(x, y ipam.Allocation) bool {
		return x.Subnet == y.Subnet && x.Owner == y.Owner && slices.Equal(x.IPs, y.IPs) &&
			x.MAC.String() == y.MAC.String() && x.Allocated.Equal(y.Allocated)
	})
}

func TestReleaseOrderPersisted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ipam.db")
	st, m := open(t, path)
	small := ipam.Subnet{Name: "small", CIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/29")}}
	must(t, m.EnsureSubnet(ctx, small))
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} { // .1 ... .6
		_, err := m.Allocate(ctx, ipam.Request{Subnet: "small", Owner: owner(n)})
		must(t, err)
	}
	for _, n := range []string{"e", "b", "d"} {
		must(t, m.Release(ctx, owner(n)))
	}
	must(t, st.Close())
	st, m = open(t, path)
	defer st.Close()
	var got []string
	for i := 0; i < 3; i++ {
		a, err := m.Allocate(ctx, ipam.Request{Subnet: "small", Owner: owner("x" + string(rune('0'+i)))})
		must(t, err)
		got = append(got, a.IPs[0].String())
	}
	if want := []string{"10.0.0.5", "10.0.0.2", "10.0.0.4"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want least recently released first %v", got, want)
	}
	if _, ok := m.Owner("small", netip.MustParseAddr("10.0.0.5")); !ok {
		t.Error("reused address has no owner")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ipam.db")
	st, _ := open(t, path)
	must(t, st.Close())
	if v := userVersion(t, path); v != sqlitestore.SchemaVersion || v < 1 {
		t.Errorf("user_version = %d, want %d", v, sqlitestore.SchemaVersion)
	}
	setUserVersion(t, path, sqlitestore.SchemaVersion+1)
	_, err := sqlitestore.Open(context.Background(), path, nil)
	if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Errorf("opening a newer schema: got %v", err)
	}
}

func TestCorruptFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "ipam.db")
	junk := []byte(strings.Repeat("this is not a sqlite database\n", 200))
	must(t, os.WriteFile(path, junk, 0o600))
	_, err := sqlitestore.Open(ctx, path, nil)
	if !errors.Is(err, sqlitestore.ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("got %v, want ErrCorrupt naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != string(junk) {
		t.Error("Open changed the corrupt file")
	}
	st, aside, err := sqlitestore.OpenOrReset(ctx, path, nil)
	must(t, err)
	defer st.Close()
	if b, err := os.ReadFile(aside); err != nil || string(b) != string(junk) {
		t.Errorf("corrupt file not kept at %q: %v", aside, err)
	}
	m, err := ipam.New(ctx, st, nil)
	must(t, err)
	if len(m.Allocations()) != 0 {
		t.Error("fresh database is not empty")
	}
}

func TestCorruptPage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ipam.db")
	st, m := open(t, path)
	must(t, m.EnsureSubnet(ctx, testSubnet))
	for i := 0; i < 300; i++ {
		_, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner(time.Duration(i).String())})
		must(t, err)
	}
	must(t, st.Close())
	// Checkpointed on close: overwrite the middle pages of the main file with garbage.
	b, err := os.ReadFile(path)
	must(t, err)
	if len(b) < 8*4096 {
		t.Fatalf("database unexpectedly small: %d bytes", len(b))
	}
	for i := 2 * 4096; i < len(b)-4096; i++ {
		b[i] = byte(i * 7)
	}
	must(t, os.WriteFile(path, b, 0o600))
	_, err = sqlitestore.Open(ctx, path, nil)
	if !errors.Is(err, sqlitestore.ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
}

// TestSchemaRefusesDuplicates: even if the allocator had a bug, the store would not persist
// one address for two owners, nor one MAC twice.
func TestSchemaRefusesDuplicates(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "ipam.db"), nil)
	must(t, err)
	defer st.Close()
	ip := []netip.Addr{netip.MustParseAddr("10.42.0.20")}
	a := ipam.Allocation{Subnet: "s", Owner: owner("a"), IPs: ip, MAC: net.HardwareAddr{0xa, 0, 0, 0, 0, 1}}
	b := ipam.Allocation{Subnet: "s", Owner: owner("b"), IPs: ip, MAC: net.HardwareAddr{0xa, 0, 0, 0, 0, 2}}
	c := ipam.Allocation{Subnet: "s", Owner: owner("c"), IPs: []netip.Addr{netip.MustParseAddr("10.42.0.21")}, MAC: a.MAC}
	must(t, st.Commit(ctx, []ipam.Change{{PutAllocation: &a}}))
	for name, dup := range map[string]*ipam.Allocation{"address": &b, "mac": &c} {
		if err := st.Commit(ctx, []ipam.Change{{PutAllocation: dup}}); err == nil {
			t.Errorf("duplicate %s committed", name)
		}
	}
	s, err := st.Load(ctx)
	must(t, err)
	if len(s.Allocations) != 1 || s.Allocations[0].Owner != a.Owner {
		t.Errorf("a failed commit left %v", s.Allocations)
	}
}

func TestDurabilitySettings(t *testing.T) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "ipam.db"), nil)
	must(t, err)
	defer st.Close()
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "5000"} {
		if got, err := st.Pragma(context.Background(), pragma); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
}
