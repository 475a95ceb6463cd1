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

// tableNames lists the database's tables, sorted.
func tableNames(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	must(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
	must(t, err)
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		must(t, rows.Scan(&n))
		names = append(names, n)
	}
	must(t, rows.Err())
	return names
}
