package sqlitestore_test

import (
	"context"
	"database/sql"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// TestMigrateV1 opens a file written with schema 1 (text addresses and MACs) and checks that
// every allocation and release record comes through the migration, and the IPAM works on it.
func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	path := oldDatabase(t,
		sqlitestore.SchemaV1,
		`INSERT INTO subnets VALUES ('ovn-default', '{"name":"ovn-default","cidrs":["10.42.0.0/16","fd00:42::/112"],"gateways":["10.42.0.1","fd00:42::1"],"excludes":null}')`,
		`INSERT INTO allocations VALUES ('default/a', 'eth0', 'ovn-default', '10.42.0.2', 'fd00:42::2', '0a:58:0a:2a:00:02', 1000)`,
		`INSERT INTO allocations VALUES ('default/b', 'net1', 'ovn-default', '10.42.0.9', 'fd00:42::9', '00:00:00:01:02:03', 2000)`,
		`INSERT INTO released VALUES ('ovn-default', '10.42.0.3', 3000)`,
		`INSERT INTO released VALUES ('ovn-default', 'fd00:42::3', 3000)`,
		`PRAGMA user_version = 1`,
	)

	st, m := openMigrated(t, path)
	defer st.Close()
	checkMigrated(t, m.Allocations(), []migrated{
		{ipam.Owner{Pod: "default/a", Interface: "eth0"}, addrsOf("10.42.0.2", "fd00:42::2"), "0a:58:0a:2a:00:02"},
		{ipam.Owner{Pod: "default/b", Interface: "net1"}, addrsOf("10.42.0.9", "fd00:42::9"), "00:00:00:01:02:03"},
	})
	// The released records survived: never-used addresses first, then the released ones.
	s, err := st.Load(ctx)
	must(t, err)
	if len(s.Released) != 2 {
		t.Errorf("released records after migration: %v", s.Released)
	}
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "ovn-default", Owner: owner("c")})
	must(t, err)
	if !slices.Equal(a.IPs, addrsOf("10.42.0.4", "fd00:42::4")) {
		t.Errorf("first allocation after migration: %v", a.IPs)
	}
}

// oldDatabase writes a database file as an older binary left it, by running stmts.
func oldDatabase(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ipam.db")
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	return path
}

// migrated is an allocation a migration must carry over.
type migrated struct {
	owner ipam.Owner
	ips   []netip.Addr
	mac   string
}

// openMigrated opens an old file and checks it now carries the current schema version.
func openMigrated(t *testing.T, path string) (*sqlitestore.Store, *ipam.IPAM) {
	t.Helper()
	st, m := open(t, path)
	if v := userVersion(t, path); v != sqlitestore.SchemaVersion || v != 4 {
		st.Close()
		t.Fatalf("schema version %d after open, want 4", v)
	}
	if tables := tableNames(t, path); !slices.Equal(tables, []string{"allocations", "released", "subnets"}) {
		st.Close()
		t.Fatalf("tables after open: %v, want allocations, released and subnets", tables)
	}
	return st, m
}

func checkMigrated(t *testing.T, got []ipam.Allocation, want []migrated) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("migrated %d allocations, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Owner != w.owner || !slices.Equal(got[i].IPs, w.ips) || got[i].MAC.String() != w.mac {
			t.Errorf("allocation %d: got %+v, want %+v", i, got[i], w)
		}
	}
}

func addrsOf(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}
