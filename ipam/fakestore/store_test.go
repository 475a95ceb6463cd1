package fakestore_test

import (
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ipam/fakestore"
	"github.com/edgeovn/edgeovn/ipam/storecontract"
)

// TestContract holds the fake to the contract the SQLite store is held to, so the allocator's
// unit tests cannot pass on a store that accepts what production refuses.
func TestContract(t *testing.T) {
	storecontract.Run(t, func(*testing.T) ipam.Store { return fakestore.New() })
}
