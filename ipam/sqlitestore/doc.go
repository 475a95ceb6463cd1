// Package sqlitestore is the durable ipam.Store: one SQLite database (modernc.org/sqlite, pure
// Go) in WAL mode with synchronous=FULL, so a commit that returned survives a power cut.
//
// It owns the schema and its migrations (PRAGMA user_version; a database newer than this
// binary is refused, an older one migrated forward in one transaction), and the check at
// open (PRAGMA quick_check; a corrupt or foreign file is reported as ErrCorrupt, and
// OpenOrReset moves it aside and starts empty, for the controller to rebuild by
// reconciliation).
//
// Schema 2 stores addresses and MACs as integers and blobs (schema 1 stored text; the
// migration converts it in Go) and the subnet specs as JSON. Schema 3 adds rec to each allocation row: the row in the form Load parses, a stored
// generated column, so SQLite writes it with the row and it cannot disagree with the columns
// (the migration rebuilds the table). Load reads the allocations in rowid chunks that SQLite
// concatenates from rec into one value each, because taking columns out row by row through
// the driver, or building the text at load, costs more than the rest of the read. (mmap_size
// and a larger cache_size were measured and made no difference.) Schema 4 drops the table of
// named IP pools that schema 2 added and no production code ever filled.
//
// The schema enforces the IPAM's uniqueness invariants on its own (one owner per subnet
// address, one live allocation per MAC), so a logic error elsewhere fails a commit instead of
// persisting a duplicate; the commit's error wraps ipam.ErrConflict. ipam/storecontract holds
// this store and ipam/fakestore to the same behaviour.
//
// Files: the database, -wal and -shm are 0600 (OpenOrReset creates the file itself, since SQLite
// would make it 0644 and gives the other two the database's mode, and tightens older ones).
// OpenReadOnly is for diagnosis beside the running daemon (`edgeovn ipam`): it creates no
// database, never migrates (a schema other than SchemaVersion is ErrSchemaMismatch), and its
// Commit fails with ErrReadOnly.
//
// Lock: a read-write Store holds a non-blocking flock on <db>.lock (LockPath), with its PID in
// the file, from before its first read (OpenOrReset's move-aside included) until Close; a second
// read-write open, in this process or another, fails with ErrLocked naming the holder. The
// kernel drops the lock of a dead holder. OpenReadOnly takes no lock.
//
// Concurrency: a Store uses one connection; the ipam package never calls Load and Commit
// concurrently and batches concurrent callers into one Commit (group commit), but a Store is
// safe for concurrent use anyway (database/sql serializes on the single connection).
package sqlitestore
