package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// ErrSchemaMismatch: a read-only open found a schema this binary does not read (older ones
// are migrated only by the controller role's read-write OpenOrReset).
var ErrSchemaMismatch = errors.New("ipam database schema version mismatch")

// ErrReadOnly: a Store from OpenReadOnly was asked to write.
var ErrReadOnly = errors.New("ipam database opened read-only")

// OpenReadOnly opens an existing database for reading only, for diagnosis while the daemon
// runs: it creates nothing, never migrates, and any write through the Store fails. SQLite
// may still make the -wal and -shm files a WAL reader needs, with the database file's mode.
func OpenReadOnly(ctx context.Context, path string, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open ipam database %s read-only: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open ipam database %s read-only: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("open ipam database %s read-only: not a regular file", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		return nil, fmt.Errorf("open ipam database %s read-only: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path, log: log, readOnly: true}
	if err := s.readable(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// readable checks the file and that its schema is the one this binary reads.
func (s *Store) readable(ctx context.Context) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	v, err := s.version(ctx)
	if err != nil {
		return fmt.Errorf("open ipam database %s read-only: %w", s.path, err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("open ipam database %s read-only: schema %d, this binary reads %d (the daemon migrates it when its controller role opens it): %w",
			s.path, v, SchemaVersion, ErrSchemaMismatch)
	}
	return nil
}
