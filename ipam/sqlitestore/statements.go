package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/edgeovn/edgeovn/ipam"
)

// The statements Commit runs, prepared once at open: parsing SQL costs more than executing
// these small statements.
const (
	stmtPutSubnet = iota
	stmtDeleteSubnet
	stmtDeleteSubnetReleased
	stmtDeleteAllocation
	stmtInsertAllocation
	stmtUnrelease
	stmtRelease
	numStmts
)

var statementSQL = [numStmts]string{
	stmtPutSubnet:            "INSERT INTO subnets (name, spec) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET spec = excluded.spec",
	stmtDeleteSubnet:         "DELETE FROM subnets WHERE name = ?",
	stmtDeleteSubnetReleased: "DELETE FROM released WHERE subnet = ?",
	stmtDeleteAllocation:     "DELETE FROM allocations WHERE pod = ? AND iface = ?",
	stmtInsertAllocation:     "INSERT INTO allocations (pod, iface, subnet, ip4, ip6, mac, allocated) VALUES (?, ?, ?, ?, ?, ?, ?)",
	stmtUnrelease:            "DELETE FROM released WHERE subnet = ? AND ip = ?",
	stmtRelease: `INSERT INTO released (subnet, ip, released) VALUES (?, ?, ?)
		ON CONFLICT (subnet, ip) DO UPDATE SET released = excluded.released`,
}

func (s *Store) prepare(ctx context.Context) error {
	for i, q := range statementSQL {
		st, err := s.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", q, err)
		}
		s.stmts[i] = st
	}
	return nil
}

func (s *Store) closeStatements() {
	for _, st := range s.stmts {
		if st != nil {
			st.Close()
		}
	}
}

// txn is one Commit's transaction, with the prepared statements bound to it once.
type txn struct {
	ctx      context.Context
	tx       *sql.Tx
	prepared *[numStmts]*sql.Stmt // the store's
	bound    [numStmts]*sql.Stmt  // bound to tx on first use
}

func (t *txn) exec(stmt int, what string, args ...any) error {
	st := t.bound[stmt]
	if st == nil {
		st = t.tx.StmtContext(t.ctx, t.prepared[stmt])
		t.bound[stmt] = st
	}
	if _, err := st.ExecContext(t.ctx, args...); err != nil {
		if isConstraint(err) {
			return fmt.Errorf("%s: %w: %w", what, ipam.ErrConflict, err)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// isConstraint reports whether err is SQLite refusing a row the schema's unique indexes
// forbid: an address or MAC another owner holds.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}
