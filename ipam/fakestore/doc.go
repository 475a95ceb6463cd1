// Package fakestore is an in-memory ipam.Store for unit tests of the allocator, beside the
// real one in ipam/sqlitestore. It implements the change semantics documented on ipam.Change
// exactly and refuses what the SQLite schema refuses (an address of a subnet or a MAC held by
// another owner: ipam.ErrConflict; a change that sets no field: ipam.ErrInvalid), with a
// refused commit changing nothing (an undo journal, undo.go). Both stores pass the same
// contract, ipam/storecontract. It also counts commits (so tests can prove a no-op wrote
// nothing) and fails on demand (so tests can prove a failed commit leaves nothing behind).
//
// Concurrency: safe for concurrent use; one mutex guards the state.
package fakestore
