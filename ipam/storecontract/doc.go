// Package storecontract is the one test suite every ipam.Store passes: Run exercises each
// change documented on ipam.Change, the uniqueness the SQLite schema enforces (one owner per
// subnet address, one live allocation per MAC, one allocation per owner), the sentinel errors
// a refused commit wraps (ipam.ErrConflict, ipam.ErrInvalid), the atomicity of a commit of
// several changes (group commit), and that Load returns what was committed and nothing else.
// ipam/sqlitestore and ipam/fakestore run it from their tests, so the fake the allocator's
// unit tests use cannot accept what production refuses.
//
// It is a non-test package (it imports testing) so both stores' tests can call it; nothing
// in a production binary imports it.
package storecontract
