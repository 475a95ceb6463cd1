package ovn

import "errors"

// Sentinel errors that callers of the northbound and vswitch clients branch on. Errors
// returned by those packages wrap one of these where it applies.
var (
	// ErrInvalid means the request was malformed; nothing was written.
	ErrInvalid = errors.New("invalid request")
	// ErrNotFound means a row the request depends on (a router, a switch, a bridge) is missing.
	ErrNotFound = errors.New("not found")
	// ErrNotOwned means a row with the requested name exists but is not edgeovn's, so edgeovn
	// leaves it alone.
	ErrNotOwned = errors.New("not owned by edgeovn")
	// ErrConflict means the database did not match what the request was built from: several
	// rows share a name that should be unique, or another writer changed the rows between
	// reading the cache and committing. Retrying re-reads the cache.
	ErrConflict = errors.New("conflict")
)

func isConflict(err error) bool { return errors.Is(err, ErrConflict) }
