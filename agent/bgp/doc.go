// Package bgp is the node role's BGP speaker: it announces this host's share of the
// cluster's addresses to the site's routers, as Kube-OVN's kube-ovn-speaker does. This
// package decides what to announce, inside edgeovn; the speaker itself (GoBGP,
// github.com/osrg/gobgp/v3, in package speaker) runs in a process of its own, edgeovn-bgp
// (cmd/edgeovn-bgp), so that the edgeovn binary links none of GoBGP and its gRPC, protobuf
// and configuration libraries: a host without BGP pays nothing for it, not even their package
// init. This package imports neither GoBGP nor package speaker (a test says so).
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
// itself from what its node role watches (the host wiring's Subnet informer and the pod watch
// of its own pods, shared: Request.Subnets, Request.Pods) and, only with announce-cluster-ip, a
// Service informer of its own: the controller role marks nothing.
//
// Invariants:
//   - Nothing starts without a neighbour (config.BGP.Enabled): no process, no informer.
//   - The speaker process is started once every informer has listed (so a restart does not
//     withdraw what is still wanted), given the full desired state (speakerproto.Desired:
//     options and prefixes) at its start and at every change, and started again with a
//     growing delay (restartFirst up to restartMax) whenever it ends. It gets SIGTERM if
//     edgeovn dies (Pdeathsig, from a goroutine locked to its thread for the child's life),
//     and at edgeovn's stop its stdin is closed and it is waited for (stopWait, then SIGKILL).
//   - What is no longer wanted is withdrawn at once (a pod deleted or being deleted, a
//     Subnet deleted, an annotation removed): the speaker diffs each full state against
//     what it announces (package speaker).
//   - An annotation value that is none of Kube-OVN's drops that object alone from the
//     announcement, with a log line and a Warning Event (BGPAnnotationInvalid) on it.
//   - Each session carries its neighbour's family (IPv4 prefixes to neighbor-address, IPv6
//     to neighbor-ipv6-address); the router ID is set, or the IPv4 source toward an IPv4
//     neighbour, or, with IPv6 neighbours only, Request.HostIPv4 (the host's encap-ip).
//   - Run ends with its ctx and leaves nothing behind (its pod and Subnet handlers are
//     removed, its Service informer stops): the node role runs it again with new options at
//     a reload.
//   - Stopping (graceful restart or a Cease) and the TCP MD5 diagnosis: package speaker.
//
// Concurrency: Run's informer handlers only poke; one goroutine computes the announcement
// and one (supervise) owns the speaker process and its pipes.
package bgp
