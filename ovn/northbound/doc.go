// Package northbound writes edgeovn's part of the OVN northbound database: the cluster
// router and join switch (EnsureCluster), one logical switch per Subnet attached to the router
// at its gateway (EnsureSubnet), and pod logical switch ports (EnsurePodPort, DeletePodPort,
// PodPorts).
//
// Invariants: every row it creates carries ovn.OwnedBy tags and it never changes or deletes a
// row without them (ovn.ErrNotOwned). Each call reads the client's cache, computes the
// difference to the desired rows, and commits it as one transaction whose every result is
// checked; when nothing differs it writes nothing. Inserts are guarded by wait operations on
// the names they create and attachments by wait operations on the parents they touch, so a
// stale cache yields ovn.ErrConflict (retry) rather than a duplicate or an orphan. Bad input
// is rejected with ovn.ErrInvalid before anything is read or written.
//
// Concurrency: a Client is safe for concurrent use. Two concurrent calls for the same rows
// may both build the same insert; the guard makes one of them fail with ovn.ErrConflict.
package northbound
