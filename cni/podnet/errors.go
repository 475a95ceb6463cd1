package podnet

import "errors"

var (
	// ErrInvalidNetns means the netns path does not exist or is not a network namespace.
	ErrInvalidNetns = errors.New("invalid network namespace")
	// ErrInvalidRequest means a SetupRequest or CheckRequest is incomplete or inconsistent.
	ErrInvalidRequest = errors.New("invalid pod network request")
	// ErrMismatch means CHECK found the pod's wiring different from what was expected.
	ErrMismatch = errors.New("pod network does not match")
)
