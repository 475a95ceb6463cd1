package sqlitestore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// TestMigrateV3 opens a file written with schema 3, whose pools table (named IP pools, which
// edgeovn no longer has) holds a row: the table is gone after the open, and the subnet, the
// allocations and the release records are all still there and used.
func TestMigrateV3(t *testing.T) {
	ctx := context.Background()
	path := oldDatabase(t,
		sqlitestore.SchemaV1,
		`DROP TABLE allocations; DROP TABLE released`,
		sqlitestore.SchemaV2,
		`DROP TABLE allocations`,
		sqlitestore.SchemaV3Allocations,
		`INSERT INTO subnets VALUES ('ovn-default', '{"name":"ovn-default","cidrs":["10.42.0.0/16"],"gateways":["10.42.0.1"],"excludes":[{"first":"10.42.0.2","last":"10.42.0.3"}]}')`,
		`INSERT INTO allocations (pod, iface, subnet, ip4, mac, allocated) VALUES ('default/a', 'eth0', 'ovn-default', 170524676, 11351769088004, 1000)`,
		`INSERT INTO released VALUES ('ovn-default', x'0a2a0005', 3000)`,
		`INSERT INTO pools VALUES ('ovn-default', 'db', '{"name":"db","ranges":[{"first":"10.42.5.0","last":"10.42.5.255"}]}')`,
		`PRAGMA user_version = 3`,
	)

	st, m := openMigrated(t, path) // schema 4, and no pools table
	defer st.Close()
	checkMigrated(t, m.Allocations(), []migrated{
		{ipam.Owner{Pod: "default/a", Interface: "eth0"}, addrsOf("10.42.0.4"), "0a:53:0a:2a:00:04"},
	})
	subnets := m.Subnets()
	if len(subnets) != 1 || len(subnets[0].Excludes) != 1 || subnets[0].Gateways[0] != addrsOf("10.42.0.1")[0] {
		t.Errorf("subnets after migration: %+v", subnets)
	}
	s, err := st.Load(ctx)
	must(t, err)
	if len(s.Released) != 1 || s.Released[0].IP != addrsOf("10.42.0.5")[0] {
		t.Errorf("released records after migration: %v", s.Released)
	}
	// Never-used addresses first (10.42.0.6, past the exclude, the held and the released one).
	a, err := m.Allocate(ctx, ipam.Request{Subnet: "ovn-default", Owner: owner("b")})
	must(t, err)
	if !slices.Equal(a.IPs, addrsOf("10.42.0.6")) {
		t.Errorf("first allocation after migration: %v, want 10.42.0.6", a.IPs)
	}
}
