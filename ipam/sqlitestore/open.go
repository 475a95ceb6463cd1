package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/edgeovn/edgeovn/ipam"
)

// ErrCorrupt: the file is not a SQLite database or fails its integrity check.
var ErrCorrupt = errors.New("ipam database is corrupt")

var _ ipam.Store = (*Store)(nil)

// Store is the SQLite ipam.Store.
type Store struct {
	db    *sql.DB
	stmts [numStmts]*sql.Stmt
	path  string
	log   *slog.Logger
	// readOnly: opened by OpenReadOnly, no statements prepared, Commit refused.
	readOnly bool
	// lock is held by a read-write Store until Close (nil when read-only).
	lock *dbLock
}

// lockBeside creates the database's directory and takes its lock.
func lockBeside(path string) (*dbLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create directory of ipam database %s: %w", path, err)
	}
	return lockDatabase(path)
}

// openLocked opens the database whose lock the caller holds; the Store takes the lock over
// only when it succeeds.
func openLocked(ctx context.Context, path string, lock *dbLock, log *slog.Logger) (*Store, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := restrictFiles(path); err != nil {
		return nil, err
	}
	dsn := "file:" + path + "?_txlock=immediate&_pragma=busy_timeout(5000)" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open ipam database %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one writer; also keeps the per-connection pragmas on every use
	db.SetConnMaxIdleTime(0)
	s := &Store{db: db, path: path, log: log, lock: lock}
	if err := s.check(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate ipam database %s: %w", path, err)
	}
	if err := s.prepare(ctx); err != nil {
		s.closeStatements()
		db.Close()
		return nil, fmt.Errorf("open ipam database %s: %w", path, err)
	}
	return s, nil
}

// check runs PRAGMA quick_check, which also proves the file is a SQLite database at all.
func (s *Store) check(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return s.classify(err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.classify(err)
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return s.classify(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("check ipam database %s: %s: %w", s.path, strings.Join(problems, "; "), ErrCorrupt)
	}
	return nil
}

func (s *Store) classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("check ipam database %s: %w: %w", s.path, ErrCorrupt, err)
		}
	}
	return fmt.Errorf("check ipam database %s: %w", s.path, err)
}

// Close closes the database, then releases its lock.
func (s *Store) Close() error {
	s.closeStatements()
	err := s.db.Close()
	if lerr := s.lock.release(); err == nil && lerr != nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("close ipam database %s: %w", s.path, err)
	}
	return nil
}

// OpenOrReset opens (creating the directory and file if needed) the database at path, checks
// it, and migrates its schema forward. The database and its -wal and -shm files are root's
// alone (0600): they list every pod. The Store holds the database's lock (LockPath) until
// Close; while another holds it, OpenOrReset fails with ErrLocked naming the holder's PID.
//
// If the database is corrupt, OpenOrReset moves the file (and its WAL and shared-memory
// files) aside with a timestamp, logs why, and opens a new empty database, which the caller
// then rebuilds from the cluster. It returns the path the damaged file was moved to, or "".
// The lock is held throughout, so no other Store sees the file moved.
func OpenOrReset(ctx context.Context, path string, log *slog.Logger) (*Store, string, error) {
	lock, err := lockBeside(path)
	if err != nil {
		return nil, "", err
	}
	s, aside, err := openOrResetLocked(ctx, path, lock, log)
	if err != nil {
		lock.release()
		return nil, "", err
	}
	return s, aside, nil
}

func openOrResetLocked(ctx context.Context, path string, lock *dbLock, log *slog.Logger) (*Store, string, error) {
	s, err := openLocked(ctx, path, lock, log)
	if !errors.Is(err, ErrCorrupt) {
		return s, "", err
	}
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405Z")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if rerr := os.Rename(path+suffix, aside+suffix); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return nil, "", fmt.Errorf("move corrupt ipam database %s aside: %w", path, rerr)
		}
	}
	if log != nil {
		log.Error("ipam database corrupt, moved aside; starting empty", "path", path, "aside", aside, "err", err)
	}
	s, err = openLocked(ctx, path, lock, log)
	return s, aside, err
}
