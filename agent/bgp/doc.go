// Package bgp is the node role's BGP speaker: it announces this host's share of the
// cluster's addresses to the site's routers, as Kube-OVN's kube-ovn-speaker does, with GoBGP
// (github.com/osrg/gobgp/v3) as a library inside the edgeovn process.
//
// What is announced (Announcements, pure) follows Kube-OVN's ovn.kubernetes.io/bgp
// annotation: a Subnet "true" or "cluster" is announced as its CIDRs (every host forwards to
// every pod over the overlay) and, unlike Kube-OVN, with the host routes of this host's pods
// in it: OVN sends a pod's replies out through the pod's own host, and its conntrack drops
// the replies of a flow that entered through another host (measured: ping and TCP from the
// site fail whenever the router's ECMP picks the other host), so the router must send each
// pod's traffic to its host; a Subnet "local" as the host routes (/32, /128) of the pods in
// it that run on this host; a pod "true", "cluster" or "local" as its host routes, from its own
// host only (Kube-OVN announces a "cluster" pod from every speaker; edgeovn's hosts watch only
// their own pods); a Service's ClusterIPs with announce-cluster-ip. Each host decides for
// itself from its own informers (Subnets, its own pods by spec.nodeName, Services only with
// announce-cluster-ip): the controller role marks nothing.
//
// Invariants:
//   - Nothing starts without a neighbour (config.BGP.Enabled): no server, no informer.
//   - The next hop is left unspecified, so GoBGP sends each peer the session's local
//     address: this host's own address toward that peer, never a pod's (Kube-OVN #4139).
//   - Speaker.Set is a diff against what is announced: applying the same set twice sends
//     nothing; what is no longer wanted is withdrawn at once (a pod deleted or being
//     deleted, a Subnet deleted, an annotation removed).
//   - Nothing is announced or withdrawn before every informer has listed once, so a
//     restart does not withdraw what is still wanted.
//   - An annotation value that is none of Kube-OVN's drops that object alone from the
//     announcement, with a log line and a Warning Event (BGPAnnotationInvalid) on it.
//   - At stop without graceful restart every session is closed with a Cease (the peers
//     withdraw at once); with graceful restart nothing is sent and the process exit closes
//     the sessions, so the peers keep the routes for graceful-restart-time (RFC 4724) and
//     drop those not announced again after the restart (End-of-RIB).
//   - A session that does not come up because of TCP MD5 says so (the kernel's MD5
//     counters of this network namespace, counted from the start).
//
// Concurrency: Run's loop is the only caller of Speaker.Set; Status may be called from
// any goroutine.
package bgp
