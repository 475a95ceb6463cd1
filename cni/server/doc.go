// Package server is the daemon side of edgeovn's CNI: it listens on the root-only unix
// socket, and for each request from the thin binary (package plugin) wires or unwires one
// pod.
//
// ADD waits (on events, through Pods) until the controller has allocated the pod, builds the
// veth pair (package podnet), plugs the host end into br-int with iface-id = the pod's
// logical switch port (Ports) and answers only once OVN has bound the port, so a pod never
// starts on a dead network. The pod's hostPorts (the "portMappings" capability) are checked
// before anything is wired, recorded on the port (ExtIDHostPorts) and served through
// HostPorts; DEL, GC and a failed ADD stop serving them. A primary network's Shaper (the
// pod's QoS annotations) runs after the port is added and before OVN's binding is awaited,
// so the limits are in force when ADD answers; its error fails the ADD (retryable). DEL removes the port and the pair; it never consults the
// Kubernetes API and succeeds when the pod, its namespace or the pair are already gone.
// STATUS is Config.Ready. GC removes ports and veths of containers the runtime no longer
// lists.
//
// Attachment networks (attachment.go): a request whose config names a provider other than
// "ovn" (a Kube-OVN NetworkAttachmentDefinition Multus delegates to the binary, installed also
// as "kube-ovn") is that attachment on the interface the runtime names (net1, ...): it waits
// for the provider's annotations, wires one more veth whose host end is
// podnet.AttachmentHostIfName(container, interface), binds it to "<pod>.<ns>.<provider>"
// (ExtIDProvider on the port), installs no default route unless the attachment's
// default_route says so, and never serves hostPorts; its DEL removes that veth and port only.
//
// IPAM calls (ipam.go, protocol.PodRequest.IPAMOnly): the binary called as another plugin's
// IPAM (macvlan with "ipam": {"type": "kube-ovn", "provider": "<nad>.<namespace>"}). ADD waits
// for that provider's annotations and answers its addresses and routes, wiring nothing; a
// provider no Subnet has (Config.SubnetProviders) is refused at once. The node holds nothing
// per container for them: DEL, CHECK and GC succeed without touching a port, and such a GC
// never runs the pod-port GC (its valid list is the calling plugin's network's only).
//
// Invariants:
//   - Only root is served: the socket's directory is 0700 (or an existing one only its owner
//     can write), the socket 0600, and each connection's SO_PEERCRED must say uid 0 (peer.go);
//     a body over 1 MiB is refused; ReadTimeout and IdleTimeout drop stalled clients.
//   - The socket is the one systemd passed (edgeovn.socket, Config.Listener) when there is
//     one, held to the same modes; it stays bound across restarts, so a CNI call made while
//     the daemon restarts waits in its queue. At shutdown the server stops accepting, lets
//     requests in flight finish for DrainTimeout with their contexts alive, and abandons the
//     rest without an answer, which the plugin resends to the next daemon.
//   - Every port ADD creates carries external_ids naming the pod, container and interface
//     (ExtID* keys); GC only ever deletes ports with ExtIDContainerID set.
//   - A failed ADD removes what it made, so nothing half-made outlives the request.
//   - Errors reach the binary as protocol.Error with a CNI error code: 11 (try again later)
//     for what a retry can fix (not ready, timeouts, OVS unavailable), 4/7/8 for bad input.
//
// Concurrency: requests are served concurrently. The runtime never overlaps commands for one
// container; GC takes an exclusive lock so that it never deletes a pair an ADD is building.
// Pods and Ports implementations must be safe for concurrent use, and AddPort and DeletePort
// must be idempotent (AddPort replaces a port of the same name, DeletePort of a missing port
// succeeds).
package server
