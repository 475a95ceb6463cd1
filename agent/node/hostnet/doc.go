// Package hostnet owns the host's side of the join network: the OVS internal port (ovn0) that
// binds to the node's logical switch port on the join switch, that interface's MAC, MTU,
// join addresses (IPv4, IPv6 or both) and up state, the routes to each family's cluster
// CIDR(s) through it via that family's join gateway, IPv4 and IPv6 forwarding,
// and the masquerading of pod traffic (IPv4 and IPv6) that leaves the host by any other
// interface; the node ports, external IPs and LoadBalancer IPs served without kube-proxy
// (EnsureServices, "ip edgeovn-svc" and, while an IPv6 node port is served, "ip6 edgeovn-svc":
// node ports on the host's own addresses of the NodePort's family; service IPs on
// any destination, Cluster to the ClusterIP masqueraded on ovn0, Local to this host's
// endpoints or dropped, the host's own connections always to the ClusterIP; a Restricted
// service IP, one rule set per allowed source network, then a drop for every other source);
// and the pods' hostPorts (HostPorts, "ip edgeovn-hostport" and "ip6 edgeovn-hostport": the
// DNATs from the host's addresses, or a mapping's hostIP, for traffic arriving and made on
// the host, and the masquerades for 127.0.0.1 and for pods of the pod's subnet, the pod
// itself included). HostPorts is safe for concurrent use: one change at a time, each table
// replaced in one netlink batch when it differs; a change that fails leaves its records as
// they were, and bad input (ErrInvalid, naming the mapping) or a host port another pod holds
// changes nothing.
//
// Ensure compares what is there with the Spec and changes only what differs, so calling it
// again with the same Spec changes nothing (no address, route, sysctl or nftables write).
//
// Invariants:
//   - It never replaces, changes or deletes what it did not create. Its routes carry
//     RouteProtocol (211, `proto 211`) and it acts only on those (and adopts an earlier
//     version's: through its interface, via Spec.Gateway, proto boot). Routes are added, never
//     replaced (RouteReplace would take the place of any route with the same destination and
//     metric, the kernel's connected route included). A prefix in Spec.Routes that overlaps a
//     main-table route it does not own (default routes excepted) is not installed: Ensure
//     applies everything else and returns a *ConflictError naming both sides. It writes on its own interface (Spec.Interface, created by edgeovn): the IPv4
//     addresses on it (any other than Spec.Address is removed) and, when Spec.Address6 is
//     set, its global IPv6 addresses (any other than Address6 is removed; link-local ones
//     stay; without Address6 IPv6 is left alone), its disable_ipv6 (0) and accept_ra (0);
//     /proc/sys/net/ipv4/ip_forward and, with Address6, net.ipv6.conf.all.forwarding (each
//     only ever set to 1, never set back). Before it turns IPv6 forwarding on, every other
//     interface whose accept_ra is 1 and whose IPv6 default route came from a router
//     advertisement (proto ra) gets accept_ra 2, or the kernel would stop taking the
//     advertisements and the host would lose its default route when it expires; that
//     sysctl is the one thing it writes on an interface not its own. And the nftables
//     tables "ip edgeovn" and "ip6 edgeovn" (each replaced as a whole, in one netlink batch,
//     when it differs; deleted when Spec.Masquerade has no prefix of its family), whose names
//     are their ownership. No other interface, route or table is written.
//   - MoveAddrs (uplink.go) is the one writer of another interface's addresses and routes:
//     it moves a NIC's to its provider bridge and back, adding on the target before removing
//     from the source, and changes nothing when the source has no address left.
//   - HostNetworks only reads: the networks the host's interfaces are on, for the controller's
//     Subnet check and the start's configuration check.
//   - A Spec that does not validate changes nothing; the error names the field (ErrInvalid).
//   - Waiting for ovs-vswitchd to create the kernel interface is event-driven (a netlink link
//     subscription) and bounded by the caller's context.
//
// Concurrency: Ensure is not called concurrently (the node role holds a lock around it: the
// Node loop and the drift loop both call it). It
// works in the network namespace of the calling goroutine's thread: callers that run inside
// another namespace (tests) call it from a goroutine locked to that namespace (ns.Do).
package hostnet
