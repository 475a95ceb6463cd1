package sqlitestore_test

import (
	"context"
	"database/sql"
	"net/netip"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// TestMigrateV2 opens a file written with schema 2 (no rec column) and checks that every
// allocation comes through the table rebuild, including names with spaces and multi-octet
// characters, which the load form carries by their octet lengths.
func TestMigrateV2(t *testing.T) {
	ctx := context.Background()
	path := oldDatabase(t,
		sqlitestore.SchemaV1,
		`DROP TABLE allocations; DROP TABLE released`,
		sqlitestore.SchemaV2,
		`INSERT INTO subnets VALUES ('ovn-default', '{"name":"ovn-default","cidrs":["10.42.0.0/16","fd00:42::/112"],"gateways":["10.42.0.1","fd00:42::1"],"excludes":null}')`,
		`INSERT INTO allocations VALUES ('default/a b', 'eth0', 'ovn-default', 170524674, x'fd000042000000000000000000000002', 11351769088002, 1000)`,
		`INSERT INTO allocations VALUES ('ns/ünï', 'net 1', 'ovn-default', 170524681, NULL, 66051, 2000)`,
		`INSERT INTO released VALUES ('ovn-default', x'0a2a0003', 3000)`,
		`PRAGMA user_version = 2`,
	)

	st, m := openMigrated(t, path)
	defer st.Close()
	checkMigrated(t, m.Allocations(), []migrated{
		{ipam.Owner{Pod: "default/a b", Interface: "eth0"}, addrsOf("10.42.0.2", "fd00:42::2"), "0a:53:0a:2a:00:02"},
		{ipam.Owner{Pod: "ns/ünï", Interface: "net 1"}, addrsOf("10.42.0.9"), "00:00:00:01:02:03"},
	})
	s, err := st.Load(ctx)
	must(t, err)
	if len(s.Released) != 1 || s.Released[0].IP != netip.MustParseAddr("10.42.0.3") {
		t.Errorf("released records after migration: %v", s.Released)
	}
	must(t, st.Close())
	// The rebuilt table's unique indexes are back: a second holder of an address is refused.
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO allocations (pod, iface, subnet, ip4, mac, allocated)
		VALUES ('ns/c', 'eth0', 'ovn-default', 170524674, 5, 0)`); err == nil {
		t.Fatal("a second holder of 10.42.0.2 was accepted after migration")
	}
}
