package sqlitestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/sqlitestore"
	"github.com/edgeovn/edgeovn/ipam/storecontract"
)

// TestContract holds the SQLite store to the contract fakestore is held to.
func TestContract(t *testing.T) {
	storecontract.Run(t, func(t *testing.T) ipam.Store {
		st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "ipam.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}
