package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/netip"
)

// migrateV1toV2 converts the text addresses and MACs of schema 1 into schema 2's integers
// and blobs. SQLite cannot parse addresses, so the rows pass through Go.
func migrateV1toV2(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{
		"DROP INDEX allocations_ip4", "DROP INDEX allocations_ip6",
		"ALTER TABLE allocations RENAME TO allocations_v1", "ALTER TABLE released RENAME TO released_v1",
		schemaV2,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.40s: %w", q, err)
		}
	}
	if err := copyAllocationsV1(ctx, tx); err != nil {
		return err
	}
	if err := copyReleasedV1(ctx, tx); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, "DROP TABLE allocations_v1; DROP TABLE released_v1")
	return err
}

func copyAllocationsV1(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT pod, iface, subnet, ip4, ip6, mac, allocated FROM allocations_v1")
	if err != nil {
		return fmt.Errorf("read schema 1 allocations: %w", err)
	}
	type row struct {
		pod, iface, subnet string
		ip4, ip6           sql.NullString
		mac                string
		at                 int64
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.pod, &r.iface, &r.subnet, &r.ip4, &r.ip6, &r.mac, &r.at); err != nil {
			rows.Close()
			return fmt.Errorf("read schema 1 allocations: %w", err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema 1 allocations: %w", err)
	}
	for _, r := range all {
		ip4, ip6, err := convertIPs(r.ip4, r.ip6)
		if err != nil {
			return fmt.Errorf("convert allocation of %s@%s: %w", r.pod, r.iface, err)
		}
		mac, err := net.ParseMAC(r.mac)
		if err != nil || len(mac) != 6 {
			return fmt.Errorf("convert mac %q of %s@%s: %w", r.mac, r.pod, r.iface, err)
		}
		if _, err := tx.ExecContext(ctx, statementSQL[stmtInsertAllocation],
			r.pod, r.iface, r.subnet, ip4, ip6, macValue(mac), r.at); err != nil {
			return fmt.Errorf("copy allocation of %s@%s: %w", r.pod, r.iface, err)
		}
	}
	return nil
}

func convertIPs(ip4, ip6 sql.NullString) (any, any, error) {
	var v4, v6 any
	if ip4.Valid {
		a, err := netip.ParseAddr(ip4.String)
		if err != nil || !a.Is4() {
			return nil, nil, fmt.Errorf("ipv4 address %q: %w", ip4.String, err)
		}
		v4 = ip4Value(a)
	}
	if ip6.Valid {
		a, err := netip.ParseAddr(ip6.String)
		if err != nil || !a.Is6() {
			return nil, nil, fmt.Errorf("ipv6 address %q: %w", ip6.String, err)
		}
		v6 = ipBlob(a)
	}
	return v4, v6, nil
}

func copyReleasedV1(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT subnet, ip, released FROM released_v1")
	if err != nil {
		return fmt.Errorf("read schema 1 released addresses: %w", err)
	}
	type row struct {
		subnet, ip string
		at         int64
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.subnet, &r.ip, &r.at); err != nil {
			rows.Close()
			return fmt.Errorf("read schema 1 released addresses: %w", err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read schema 1 released addresses: %w", err)
	}
	for _, r := range all {
		a, err := netip.ParseAddr(r.ip)
		if err != nil {
			return fmt.Errorf("convert released address %q: %w", r.ip, err)
		}
		if _, err := tx.ExecContext(ctx, statementSQL[stmtRelease], r.subnet, ipBlob(a), r.at); err != nil {
			return fmt.Errorf("copy released address %s: %w", a, err)
		}
	}
	return nil
}
