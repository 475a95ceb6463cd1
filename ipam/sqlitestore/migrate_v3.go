package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaV3Allocations adds rec, the row in the form Load reads (see loadAllocations), as a
// stored generated column: SQLite computes it when the row is written, so it cannot disagree
// with the columns, and reading it costs a quarter of building it at load. The columns stay
// the truth the unique indexes enforce.
const schemaV3Allocations = `CREATE TABLE allocations (
		pod       TEXT NOT NULL,
		iface     TEXT NOT NULL,
		subnet    TEXT NOT NULL,
		ip4       INTEGER,          -- big-endian value; NULL when the subnet has no IPv4 CIDR
		ip6       BLOB,             -- 16 octets; NULL when the subnet has no IPv6 CIDR
		mac       INTEGER NOT NULL UNIQUE, -- 48-bit value
		allocated INTEGER NOT NULL, -- unix nanoseconds
		rec       TEXT NOT NULL GENERATED ALWAYS AS (` + recExpr + `) STORED,
		PRIMARY KEY (pod, iface)
	) STRICT;
	CREATE UNIQUE INDEX allocations_ip4 ON allocations (subnet, ip4) WHERE ip4 IS NOT NULL;
	CREATE UNIQUE INDEX allocations_ip6 ON allocations (subnet, ip6) WHERE ip6 IS NOT NULL;`

// recExpr is the load form of a row:
//
//	"<mac> <allocated> <ip4|-1> <ip6 hex, empty if NULL> <len(subnet)> <len(pod)> <len(iface)> " subnet pod iface
//
// with lengths in octets, so names may hold any character.
const recExpr = `mac || ' ' || allocated || ' ' || ifnull(ip4, -1) || ' ' || hex(ip6) || ' ' ||
		octet_length(subnet) || ' ' || octet_length(pod) || ' ' || octet_length(iface) || ' ' ||
		subnet || pod || iface`

// migrateV2toV3 rebuilds the allocations table with rec (SQLite cannot add a stored column to
// an existing table).
func migrateV2toV3(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		"DROP INDEX allocations_ip4", "DROP INDEX allocations_ip6",
		"ALTER TABLE allocations RENAME TO allocations_v2",
		schemaV3Allocations,
		`INSERT INTO allocations (pod, iface, subnet, ip4, ip6, mac, allocated)
			SELECT pod, iface, subnet, ip4, ip6, mac, allocated FROM allocations_v2 ORDER BY rowid`,
		"DROP TABLE allocations_v2",
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.40s: %w", q, err)
		}
	}
	return nil
}
