package ctltest

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// IPAM is the real SQLite IPAM in the test's temporary directory.
type IPAM struct {
	*ipam.IPAM
	Path string
}

// OpenIPAM opens (creating) the database and loads the IPAM from it; the store is closed when
// the test ends.
func OpenIPAM(ctx context.Context, t testing.TB, log *slog.Logger) *IPAM {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ipam.db")
	store, _, err := sqlitestore.OpenOrReset(ctx, path, log) // as the controller opens it
	if err != nil {
		t.Fatalf("open ipam database: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	m, err := ipam.New(ctx, store, log)
	if err != nil {
		t.Fatalf("load ipam: %v", err)
	}
	return &IPAM{IPAM: m, Path: path}
}

// Rows lists what the database file holds, one line each, sorted:
//
//	alloc SUBNET OWNER[@PROVIDER] IP[,IP] MAC (PROVIDER: an attachment network's)
//	released SUBNET IP
//	subnet NAME CIDR[,CIDR]
//
// It reads the file through a read-only open, not the IPAM's memory: what a restart would load.
func (m *IPAM) Rows(ctx context.Context, t testing.TB) []string {
	t.Helper()
	ro, err := sqlitestore.OpenReadOnly(ctx, m.Path, nil)
	if err != nil {
		t.Fatalf("open ipam database read-only: %v", err)
	}
	defer ro.Close()
	st, err := ro.Load(ctx)
	if err != nil {
		t.Fatalf("read ipam database: %v", err)
	}
	var out []string
	for _, a := range st.Allocations {
		o := a.Owner.Pod
		if i := a.Owner.Interface; i != "eth0" && i != "ovn0" && i != "" {
			o += "@" + a.Owner.Interface // an attachment network's
		}
		out = append(out, fmt.Sprintf("alloc %s %s %s %s", a.Subnet, o, joinAddrs(a.IPs), a.MAC))
	}
	for _, r := range st.Released {
		out = append(out, fmt.Sprintf("released %s %s", r.Subnet, r.IP))
	}
	for _, sn := range st.Subnets {
		cidrs := make([]string, len(sn.CIDRs))
		for i, p := range sn.CIDRs {
			cidrs[i] = p.String()
		}
		out = append(out, fmt.Sprintf("subnet %s %s", sn.Name, strings.Join(cidrs, ",")))
	}
	slices.Sort(out)
	return out
}

func joinAddrs[T fmt.Stringer](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}
