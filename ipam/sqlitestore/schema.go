package sqlitestore

import (
	"context"
	"fmt"
)

// migrations[i] takes the schema from user_version i to i+1. Append only; never edit a
// migration that has shipped.
var migrations = []string{
	`CREATE TABLE subnets (
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
	) STRICT;`,
}

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
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
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
