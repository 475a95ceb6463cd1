package sqlitestore

import "context"

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
