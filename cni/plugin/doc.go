// Package plugin is the CNI side of edgeovn: the skel callbacks the thin binary
// /opt/cni/bin/edgeovn runs for ADD, DEL, CHECK, STATUS and GC. Each callback reads the
// network configuration and CNI_ARGS, forwards one protocol.PodRequest to the edgeovn daemon
// over its root-only unix socket and turns the answer into what the CNI spec wants on stdout.
//
// Invariants:
//   - The package does no networking of its own and links no netlink, OVSDB, SQLite or
//     Kubernetes client code (a test enforces it), so the binary starts in a few
//     milliseconds; the daemon does the work.
//   - A daemon that cannot be reached, or that breaks the connection before answering (killed
//     or restarting), is sent the request again with backoff for up to 30 s (5 s for STATUS),
//     within the configuration's timeout (90 s by default): a restart is waited out, not
//     reported. Every command is safe to resend. With edgeovn.socket (systemd socket
//     activation) the connection simply waits in the socket's queue during a restart.
//   - Errors reach the runtime as *types.Error with a spec error code. A daemon that still
//     cannot be reached is "try again later" (11) for ADD, DEL, CHECK and GC, and "plugin not
//     available" (50) for STATUS; an error the daemon answers is passed on, never resent.
//   - DEL does not succeed while the daemon is down: the daemon owns the OVS port and the host
//     veth, and answering success would leak both forever. Runtimes retry a failed DEL
//     (containerd does, and repeats DEL during sandbox GC), and the daemon's DEL succeeds when
//     the pod or its namespace is already gone, so the retry converges once the daemon is up.
//
// IPAM mode (ipam.go): called with another plugin's config whose "ipam" section has type
// "kube-ovn" (or "edgeovn"), as macvlan calls its IPAM, the binary forwards the request with
// IPAMOnly, ipam.provider and ipam.serverSocket, and prints an IPAM result (addresses and
// routes, no interface). A bad ipam section is an error naming the field; its DEL succeeds.
//
// Concurrency: each binary invocation handles one command; there is no shared state.
package plugin
