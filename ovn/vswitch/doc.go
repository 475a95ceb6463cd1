// Package vswitch writes edgeovn's part of the host's Open_vSwitch database: the integration
// bridge (EnsureBridge), the settings ovn-controller reads from the Open_vSwitch row's
// external_ids (SetOVNConfig), pod ports with their iface-id (AddPort, DeletePort, Ports), the
// host's internal port ovn0 with its MAC and MTU (AddPort with Type PortInternal), pod ports'
// QoS rows (SetPortQoS: a linux-noop row that keeps ovs-vswitchd off a shaped port's qdisc), the
// removal of pod ports no longer desired (GC, in batches), and it waits for ovn-controller to
// report a port's flows installed (WaitInstalled) and follows the northbound configuration
// number ovn-controller reports installed on the integration bridge (InstalledNBCfg,
// OnNBCfgInstalled), and the underlay's provider bridges (provider.go: EnsureProviderBridge,
// ProviderBridges, DeleteProviderBridge, tagged edgeovn-provider, standalone fail mode, a
// fixed hwaddr) and ovn-bridge-mappings entries (SetBridgeMapping keeps the others), and
// traffic mirroring (mirror.go: SetMirror, DeleteMirror, DeleteMirrors: one Mirror row,
// Kube-OVN's m0, tagged edgeovn's, and its internal output port mirror0 tagged edgeovn-mirror,
// with no iface-id; another's Mirror row or a taken output name is refused, nothing written).
//
// Invariants: bridges, ports and interfaces it creates carry ovn.OwnedBy tags (ports and
// interfaces at least vendor=edgeovn) and it never changes or deletes one without them
// (ovn.ErrNotOwned). Each call compares the cache with the desired rows and commits the
// difference as one checked transaction; when nothing differs it writes nothing. External-ID
// changes are made by key-wise mutations so that keys written by others (ovn-controller's
// ovn-installed, an administrator's settings) are kept. The Open_vSwitch row itself must
// exist (ovs-ctl / `ovs-vsctl init` create it); its absence is ovn.ErrNotFound. GC only ever
// considers edgeovn system ports that carry an iface-id, never an internal port, and
// deletes an edgeovn QoS row with its port (QoS is a root table: nothing else would).
// After AddPort of a system port, no other edgeovn pod port on the bridge carries its
// iface-id: a twin left by a lost sandbox is deleted in the same transaction (stale.go), so
// ovn-controller never sees two interfaces of one logical port and a later port deletion
// never releases a live binding. A port ovn-controller released after binding it keeps
// ovn-installed-ts without ovn-installed (Port.BindingLost); ReclaimPort takes its iface-id
// away and gives it back, in two transactions, which makes ovn-controller claim it again.
// Creates are guarded (wait operations and the schema's name indexes), so two clients adding
// the same port at once end with one port; the loser gets ovn.ErrConflict or, when its cache
// already shows the winner's port, succeeds without writing.
//
// Concurrency: a Client is safe for concurrent use. WaitInstalled is event-driven: one cache
// event handler, registered at Connect, wakes the waiters of the interface that changed.
package vswitch
