package sqlitestore_test

import (
	"database/sql"
	"fmt"
	"runtime"
	"testing"

	_ "modernc.org/sqlite"
)

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	var v int
	must(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	return v
}

func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	must(t, err)
}

func testingProcs() int { return runtime.GOMAXPROCS(0) }
