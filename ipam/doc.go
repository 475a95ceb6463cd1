// Package ipam allocates pod addresses and MACs on edgeovn's subnets. It owns the allocation
// rules; durability is delegated to a Store (ipam/sqlitestore in production, ipam/fakestore in
// tests; ipam/storecontract is the suite both pass), and the package imports no netlink,
// OVSDB, Kubernetes or SQLite code (imports_test.go enforces it).
//
// Invariants:
//   - An address is held by at most one owner (a pod's interface) at any time, and a MAC by at
//     most one live allocation. An owner holds at most one allocation: one address per family
//     of its subnet.
//   - The gateway and excluded ranges are never handed out, nor the network and broadcast
//     addresses of an IPv4 prefix or the subnet-router anycast address of an IPv6 prefix,
//     except on /31, /32, /127 and /128, where every address is a host address.
//   - A released address is not reused while a never-used address remains; then the least
//     recently released address is reused first. This order survives a restart.
//   - A change is durable in the store before the call that made it returns; if the store
//     fails, the IPAM reloads it, so memory never keeps a change the store does not have.
//   - Bad input is rejected before anything changes. A static address outside its subnet is
//     refused naming the subnet it belongs to, if any; CheckStatic tells, without allocating,
//     whether addresses could ever be pinned in a subnet (an ip_pool is checked whole).
//   - A subnet with live allocations cannot be deleted, nor changed so that a live address
//     falls outside it or becomes its gateway; an address newly excluded stays with its owner
//     until released.
//
// ImportReleased records releases another IPAM made (a previous leader's, noted by the
// controller in northbound), so a new leader keeps the release order; it never touches a held
// address and never makes a record older.
//
// Reconcile makes the IPAM agree with the cluster's claims (pod annotations), oldest claim
// first, and reports what it adopted, released and refused; the controller runs it when it
// gains the Lease, before allocating anything.
//
// Indexes: owners by pod, then interface (one map serves lookups and ReleasePod); MACs as
// 48-bit integers; each subnet's holders by address. Start-up: New fills them in bulk, the
// owner and MAC indexes on one core and the addresses on another, checking the store's
// uniqueness by counts; only if that check fails does it index the records one by one,
// logging and skipping each inconsistent one.
//
// Concurrency: an IPAM is safe for concurrent use. m.mu guards the in-memory state; each
// mutating call takes it briefly to validate, apply the change in memory and queue it, then
// waits for the change to be durable without holding it. A waiter that finds no commit in
// flight becomes the committer and writes every queued change in one Store.Commit (group
// commit), so concurrent callers share one fsync; the others wait on their ticket's channel. Commit and Load are never called concurrently. Queries (Get, Owner,
// Allocations, Subnets) read memory under a read lock and may see a change whose commit is in
// flight.
package ipam
