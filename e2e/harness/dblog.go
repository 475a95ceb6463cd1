package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// The rig's database files, by stem: ovsdb-server appends every committed write transaction
// to its file (standalone format: a header line, then the transaction as one JSON line; the
// first record is the schema). Writes to ephemeral columns (ovs-vswitchd's statistics and
// status) are not logged.
const (
	NBDatabase  = "ovnnb_db"
	OVSDatabase = "conf"
)

// Transaction is one committed write transaction as the database file records it.
type Transaction struct {
	Comment string   // the transaction's comment op, if any ("ovs-vsctl: ...")
	Tables  []string // the tables it wrote, sorted
	Raw     string   // the record as logged
}

// Transactions reads the write transactions logged in the database file so far. A compaction
// (the server rewriting its file as one snapshot) makes the count start again, so callers
// compare counts over short spans.
func (r *Rig) Transactions(db string) ([]Transaction, error) {
	f, err := os.Open(r.path(db + ".db"))
	if err != nil {
		return nil, fmt.Errorf("read database %s: %w", db, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []Transaction
	first := true
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "OVSDB JSON ") || line == "" {
			continue
		}
		if first { // the schema
			first = false
			continue
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("database %s: record %d: %w", db, len(out)+1, err)
		}
		t := Transaction{Raw: line}
		for k, v := range rec {
			switch {
			case k == "_comment":
				_ = json.Unmarshal(v, &t.Comment)
			case !strings.HasPrefix(k, "_"):
				t.Tables = append(t.Tables, k)
			}
		}
		slices.Sort(t.Tables)
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read database %s: %w", db, err)
	}
	return out, nil
}
