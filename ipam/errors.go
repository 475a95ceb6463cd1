package ipam

import "errors"

// Sentinel errors callers branch on. Every returned error wraps at most one of them and says
// which subnet, owner or address it was about.
var (
	// ErrExhausted: the subnet (or one family of a dual-stack subnet) has no free address.
	ErrExhausted = errors.New("no free address")
	// ErrConflict: the requested address or MAC is held by another owner, or a subnet change
	// would strand live allocations.
	ErrConflict = errors.New("held by another owner")
	// ErrUnknownSubnet: the request names a subnet EnsureSubnet never created.
	ErrUnknownSubnet = errors.New("unknown subnet")
	// ErrOutOfRange: a requested address lies outside the subnet's CIDRs, or is a network or
	// broadcast address that is never handed out.
	ErrOutOfRange = errors.New("out of range")
	// ErrExcluded: a requested address lies in one of the subnet's excluded ranges.
	ErrExcluded = errors.New("excluded")
	// ErrGateway: a requested address is the subnet's gateway.
	ErrGateway = errors.New("is the gateway")
	// ErrInvalid: malformed input (a subnet spec, an owner, a MAC, a range).
	ErrInvalid = errors.New("invalid")
	// ErrInUse: a subnet cannot be deleted while it has live allocations.
	ErrInUse = errors.New("in use")
)
