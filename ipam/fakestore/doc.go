// Package fakestore is an in-memory ipam.Store for unit tests of the allocator, beside the
// real one in ipam/sqlitestore. It implements the change semantics documented on ipam.Change
// exactly, counts commits (so tests can prove a no-op wrote nothing), and fails on demand
// (so tests can prove a failed commit leaves nothing behind).
//
// Concurrency: safe for concurrent use; one mutex guards the state.
package fakestore
