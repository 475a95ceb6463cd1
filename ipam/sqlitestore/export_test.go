package sqlitestore

import (
	"context"
	"log/slog"
)

// Pragma reads a pragma on the store's own connection, for tests.
func (s *Store) Pragma(ctx context.Context, name string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v)
	return v, err
}

// SchemaV1 is the first schema, for the migration test.
const SchemaV1 = schemaV1

// SchemaV2 is the second schema, for the migration test.
const SchemaV2 = schemaV2

// SchemaV3Allocations is the third schema's allocations table, for the migration test.
const SchemaV3Allocations = schemaV3Allocations

// Open is OpenOrReset that fails with ErrCorrupt instead of moving a corrupt file aside, for
// tests that look at what the check found. Production opens with OpenOrReset.
func Open(ctx context.Context, path string, log *slog.Logger) (*Store, error) {
	lock, err := lockBeside(path)
	if err != nil {
		return nil, err
	}
	s, err := openLocked(ctx, path, lock, log)
	if err != nil {
		lock.release()
		return nil, err
	}
	return s, nil
}
