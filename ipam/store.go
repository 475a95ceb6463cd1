package ipam

import (
	"context"
	"net/netip"
	"time"
)

// Store keeps the IPAM's state durable. The IPAM reads it whole with Load (at New, and again
// after a failed Commit to drop what was never made durable) and writes it with Commit.
//
// Commit must apply all changes in one atomic, durable transaction: when it returns nil they
// survive a crash; when it returns an error none of them took effect. The IPAM never calls
// Commit or Load concurrently, and batches changes of concurrent callers into one Commit
// (group commit), so a store does not need its own batching.
//
// Load returns a State the caller owns: the IPAM keeps its slices without copying.
type Store interface {
	Load(ctx context.Context) (State, error)
	Commit(ctx context.Context, changes []Change) error
}

// State is everything a Store holds.
type State struct {
	Subnets     []Subnet
	Allocations []Allocation
	Released    []Released
}

// Released records an address that was handed out and is free again, and since when, so the
// least recently released address is reused first, and only when no never-used address is left.
type Released struct {
	Subnet string
	IP     netip.Addr
	At     time.Time
}

// Change is one write. Exactly one field is set.
//
// Semantics a Store must implement:
//   - PutSubnet creates or replaces the subnet by name.
//   - DeleteSubnet removes the subnet and its released records (it has no allocations).
//   - PutAllocation creates or replaces the owner's allocation (an owner has at most one) and
//     removes its addresses from the released records.
//   - Release removes the owner's allocation and records each of its addresses as released at
//     Release.At.
//   - PutReleased records one address, held by nobody, as released at its At (creating or
//     replacing its record): a release another IPAM made, imported by ImportReleased.
type Change struct {
	PutSubnet     *Subnet
	DeleteSubnet  string
	PutAllocation *Allocation
	Release       *ReleaseChange
	PutReleased   *Released
}

// ReleaseChange is the Change that frees an owner's allocation.
type ReleaseChange struct {
	Allocation Allocation // as it was, so the store knows the subnet and addresses
	At         time.Time
}
