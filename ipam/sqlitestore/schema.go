package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// migration takes the schema from one user_version to the next, inside the migration's
// transaction.
type migration func(ctx context.Context, tx *sql.Tx) error

// migrations[i] takes the schema from user_version i to i+1. Append only; never edit a
// migration that has shipped.
var migrations = []migration{
	execMigration(schemaV1),
	migrateV1toV2,
	migrateV2toV3,
	execMigration(dropPoolsV4),
}

func execMigration(q string) migration {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, q)
		return err
	}
}

// schemaV1 stored addresses and MACs as text.
const schemaV1 = `CREATE TABLE subnets (
		name TEXT PRIMARY KEY,
		spec TEXT NOT NULL -- JSON of ipam.Subnet
	) STRICT;
	CREATE TABLE allocations (
		pod       TEXT NOT NULL,
		iface     TEXT NOT NULL,
		subnet    TEXT NOT NULL,
		ip4       TEXT,          -- NULL when the subnet has no IPv4 CIDR
		ip6       TEXT,          -- NULL when the subnet has no IPv6 CIDR
		mac       TEXT NOT NULL UNIQUE,
		allocated INTEGER NOT NULL, -- unix nanoseconds
		PRIMARY KEY (pod, iface)
	) STRICT;
	CREATE UNIQUE INDEX allocations_ip4 ON allocations (subnet, ip4);
	CREATE UNIQUE INDEX allocations_ip6 ON allocations (subnet, ip6);
	CREATE TABLE released (
		subnet   TEXT NOT NULL,
		ip       TEXT NOT NULL,
		released INTEGER NOT NULL, -- unix nanoseconds
		PRIMARY KEY (subnet, ip)
	) STRICT;`

// schemaV2 stores addresses and MACs as integers and blobs: smaller rows, smaller indexes
// and no parsing at load, which is what start-up time is made of. It adds a table of named IP
// pools, which schema 4 drops.
const schemaV2 = `CREATE TABLE allocations (
		pod       TEXT NOT NULL,
		iface     TEXT NOT NULL,
		subnet    TEXT NOT NULL,
		ip4       INTEGER,          -- big-endian value; NULL when the subnet has no IPv4 CIDR
		ip6       BLOB,             -- 16 octets; NULL when the subnet has no IPv6 CIDR
		mac       INTEGER NOT NULL UNIQUE, -- 48-bit value
		allocated INTEGER NOT NULL, -- unix nanoseconds
		PRIMARY KEY (pod, iface)
	) STRICT;
	-- Partial: a single-stack allocation writes no entry for its missing family.
	CREATE UNIQUE INDEX allocations_ip4 ON allocations (subnet, ip4) WHERE ip4 IS NOT NULL;
	CREATE UNIQUE INDEX allocations_ip6 ON allocations (subnet, ip6) WHERE ip6 IS NOT NULL;
	CREATE TABLE released (
		subnet   TEXT NOT NULL,
		ip       BLOB NOT NULL,    -- 4 or 16 octets
		released INTEGER NOT NULL, -- unix nanoseconds
		PRIMARY KEY (subnet, ip)
	) STRICT;
	CREATE TABLE pools (
		subnet TEXT NOT NULL,
		name   TEXT NOT NULL,
		spec   TEXT NOT NULL, -- JSON of ipam.Pool
		PRIMARY KEY (subnet, name)
	) STRICT;`

// dropPoolsV4 drops schema 2's pools table: the IPAM never had named IP pools in production
// (the controller refuses Kube-OVN's IPPool objects), so no row of it was ever written by a
// released binary, and nothing reads it.
const dropPoolsV4 = `DROP TABLE pools`

// SchemaVersion is the schema version this binary writes.
var SchemaVersion = len(migrations)

func (s *Store) version(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// migrate brings the schema to SchemaVersion, all steps in one transaction.
func (s *Store) migrate(ctx context.Context) error {
	v, err := s.version(ctx)
	if err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this binary's %d", v, SchemaVersion)
	}
	if v == SchemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	for i := v; i < SchemaVersion; i++ {
		if err := migrations[i](ctx, tx); err != nil {
			return fmt.Errorf("migrate schema %d to %d: %w", i, i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("set schema version %d: %w", SchemaVersion, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	s.log.Info("ipam database schema migrated", "from", v, "to", SchemaVersion)
	return nil
}
