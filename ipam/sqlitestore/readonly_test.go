package sqlitestore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
)

// TestOpenReadOnly: the diagnostic open reads what the daemon wrote, also while the daemon
// holds the database, changes no byte of it, refuses to write, never creates a database and
// never migrates one.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ipam.db")
	st, m := open(t, path)
	must(t, m.EnsureSubnet(ctx, testSubnet))
	_, err := m.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner("a")})
	must(t, err)

	ro, err := sqlitestore.OpenReadOnly(ctx, path, nil)
	must(t, err)
	if s, err := ro.Load(ctx); err != nil || len(s.Allocations) != 1 {
		t.Fatalf("read beside the running writer: %d allocations, %v", len(s.Allocations), err)
	}
	must(t, ro.Close())
	must(t, st.Close())

	before, err := os.ReadFile(path)
	must(t, err)
	ro, err = sqlitestore.OpenReadOnly(ctx, path, nil)
	must(t, err)
	rm, err := ipam.New(ctx, ro, nil)
	must(t, err)
	if _, err := rm.Allocate(ctx, ipam.Request{Subnet: testSubnet.Name, Owner: owner("b")}); !errors.Is(err, sqlitestore.ErrReadOnly) {
		t.Fatalf("allocate through a read-only store: %v", err)
	}
	must(t, ro.Close())
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the read-only open changed the database file")
	}

	missing := filepath.Join(t.TempDir(), "none.db")
	if _, err := sqlitestore.OpenReadOnly(ctx, missing, nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only open of a missing database: %v", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("read-only open created %s", missing)
	}

	setUserVersion(t, path, 2)
	if _, err := sqlitestore.OpenReadOnly(ctx, path, nil); !errors.Is(err, sqlitestore.ErrSchemaMismatch) {
		t.Fatalf("read-only open of an older schema: %v", err)
	}
	if v := userVersion(t, path); v != 2 {
		t.Fatalf("read-only open migrated the schema to %d", v)
	}
}
