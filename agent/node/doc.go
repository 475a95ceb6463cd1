// Package node is edgeovn's node role, which runs on every host from start to stop, whether
// or not this host holds the controller Lease and whether or not the API server is reachable.
//
// It configures the host's Open_vSwitch database for ovn-controller (chassis name, southbound
// remote, encapsulation, datapath type detected from the kernel), ensures br-int, installs the
// CNI binary, the loopback plugin it ships (where none exists; a portmap an older edgeovn
// installed is removed) and the config for the container runtime, and serves the CNI server
// that wires pods. hostPort is served here, not by a chained portmap (hostports.go,
// hostnet.HostPorts): each pod's mappings are recorded on its OVS port (external_ids
// host_ports), restored at start without rewriting what is right, repaired by the drift
// check, and dropped with the pod's DEL, GC or port sweep. On the userspace datapath
// it keeps the ct_zero_snat capability off and purges ovs-vswitchd's datapath flow cache each
// time ovn-controller installs another northbound configuration (flowcache.go says why), and
// keeps its conntrack's TCP sequence check off, checked every 5 s since ovs-vswitchd forgets
// it at a restart (tcpseq.go says why).
// The encapsulation address (encap.go, encapkeep.go) is --encap-ip, else the IPv4 default
// route's source or the Node's InternalIP (--encap-ip-from); it is re-checked at every drift
// check and netlink route or address event and on Node changes, and rewritten when it moved.
// It is never a loopback: with none found the node is not ready, and ovn-controller is given
// none rather than a wrong one. The southbound remote is every SB endpoint, comma-separated
// (ovnremote.go). ovn0 is wired from this Node's annotations (hostwire.go: each family's join
// address and gateway, the Subnets of the families it has a join address of routed); when this host's
// own Node is deleted while it runs, ovn0 is removed and readiness says why until the Node is
// registered again (nodegone.go). The Subnets in force are routed through ovn0 and, with
// natOutgoing, masqueraded (subnets.go): those Validated, and those still Ready whose latest
// change the controller refused (the network applied before stays in force), but those that
// overlap a network of this host, the join network or a Service CIDR (the node's own guard,
// subnetcheck), and those hostnet leaves out for a route it does not own in the way; both are
// reported (log, edgeovn_host_route_conflicts, the Node's edgeovn.io/route-conflicts). The
// host's networks are published on its Node (edgeovn.io/host-networks) for the controller's
// Subnet check (hostconflicts.go), again at each change of the host's addresses. One netlink subscription (hostevents.go)
// serves the readiness watch, the drift check and this address watch; link-scoped addresses
// and routes (each pod veth's fe80:: address and its fe80::/64 and multicast routes) reach
// none of them, so a burst of pods sets off no pass of either.
// Without kube-proxy (services.go; kubeproxy.go detects it, --kube-proxy overrides) the host
// serves Services in the nftables tables "ip edgeovn-svc" and "ip6 edgeovn-svc": NodePorts on its
// own addresses, once per family of the Service's ClusterIPs
// (nodeports.go), and external IPs and VIP-mode LoadBalancer IPs arriving on any interface
// (serviceips.go), both externalTrafficPolicies; an external or LoadBalancer IP inside the
// pod, join or service network, or one of the host's own addresses on a port a host listener
// holds (read through sock_diag, listeners.go: never /proc/net/tcp, whose cost is every socket
// of the machine), is left out for that Service only (serviceipguard.go) and logged; the last,
// which only this host can see, is also a Warning Event (ServiceIPRefused, servicerefusals.go),
// the controller records the others'. A LoadBalancer IP of a Service with
// loadBalancerSourceRanges serves only those sources (agent/sourceranges; the rest dropped, the
// host's own connections too). The healthCheckNodePorts of
// Local LoadBalancer Services are answered as kube-proxy does (servicehealth.go, svchealth).
// With kube-proxy present the table is removed and no health check is served.
// Underlay (underlay.go, underlay_status.go): each kubeovn.io/v1 ProviderNetwork that names
// this host gets br-<provider> (this host's datapath, a fixed MAC) with the NIC as its uplink,
// the host's addresses and routes moved to it without a gap (hostnet.MoveAddrs; IPv6 DAD off
// on the bridge, the addresses passed it on the NIC), and its
// ovn-bridge-mappings entry; a network gone or excluding this node gets its NIC back, and so
// does every provider bridge at `edgeovn cleanup --ovs`. Nothing is given back before the first
// list of ProviderNetworks arrived, and a bad spec of a wired network leaves it wired; a NIC in
// a bridge stays that network's; ovn-chassis-mac-mappings gets a per-node, per-provider MAC
// (routed traffic on the provider network leaves with it). Each node writes its own Ready
// condition in the network's status, and a Warning Event on the network when it is not ready;
// exchangeLinkName, autoCreateVlanSubinterfaces for a missing subinterface, and
// vlanInterfaces/preserveVlanInterfaces naming subinterfaces the host has, are refused per node
// naming the field. spec.nodeSelector, when set, chooses the nodes by this Node's labels (an
// informer of this Node alone; excludeNodes then not read, as in Kube-OVN; with the Node
// unreadable nothing changes); a node a network no longer applies to removes its condition
// from the status. Each node keeps Kube-OVN's labels <provider>.provider-network.kubernetes.io/
// ready, interface, mtu (ready) or exclude (not applying) on its Node (underlay_labels.go).
// An underlay Subnet of the default VPC with u2oInterconnection (u2o.go) is routed through
// ovn0; on any VPC its pods' default gateway is its status.u2oInterconnectionIP, and the CNI
// ADD of such a pod fails until the controller has written it.
// Pod QoS (podqos.go, agent/podqos): Kube-OVN's ingress_rate, egress_rate, bursts and netem
// annotations are applied by the CNI server's Shaper at ADD and at each change of a pod of
// this node (the pod watch's OnChange); bad values change nothing and are Warning Events.
// Invariants: files are replaced atomically (temporary file and rename in the same directory,
// so containerd's watcher sees a whole file) and only when their content changes; a plugin
// another package installed is never replaced, one edgeovn installed (recorded with its
// digest in the bin dir's ManifestName) is upgraded with the shipped one; the CNI config is written last, once the
// server answers and every plugin it names is in place, so the runtime never calls a dead
// socket or a missing plugin; a start whose files all still have the stamps (inode, size,
// mode, mtime) recorded after the last full check (FilesRecordName, beside the CNI socket)
// only stats them, any difference brings the full check back; a drift check that finds everything right writes nothing; a pod
// port on br-int is removed by it only when its device was gone at two checks in a row
// (portsweep.go), never while a CNI ADD or DEL may be handling it.
// A pod port that ovn-controller bound (ovn-installed) and released since, with its device
// still there, is reclaimed (its iface-id taken away and given back, the one change that
// makes ovn-controller 23.03 claim a released port again) when two checks in a row found
// it so, and again after a delay that doubles (3 s up to a minute) while it stays lost; each
// reclaim is logged and counted in edgeovn_pod_binding_reclaims_total (bindwatch.go). So is a
// port with ovn-installed whose southbound Port_Binding is not up on this chassis
// (ovn-controller can release a port and leave ovn-installed="true" on it): the southbound is
// read with a client dialed lazily, once some pod port is bound, that monitors nothing and
// selects only this chassis's rows (sbbindings.go); while it cannot be read, the local
// database decides alone.
// Mirroring (mirror.go): br-int's Mirror row m0 copies every packet (--enable-mirror) or the
// ports of this node's pods annotated ovn.kubernetes.io/mirror="true", both directions, to the
// internal port --mirror-iface (mirror0), set up; pod changes and CNI ADDs act at once, a
// timer repairs; with nothing to mirror, neither exists. A name a link edgeovn did not make
// already has is refused (MirrorRefused Event on the Node, nothing changed).
// The pinger (pinger.go, agent/pinger) runs only with --enable-pinger.
// With a BGP neighbour configured (config.BGP) the role runs package bgp once the API client
// and the host wiring's Subnet informer exist (bgp.go): the announcement is made from the
// role's own pod watch and Subnet informer (shared, not a second watch) and spoken by the
// speaker process edgeovn-bgp, found next to this binary, which package bgp supervises;
// without a neighbour nothing of it starts. Options from Request.BGPReload (SIGHUP) that
// differ from the running ones stop that run and start one with them (none without a
// neighbour), the rest of the role untouched.
// At shutdown, what a CNI request needs (the pod watch, the OVS client) runs until the server
// has drained its requests in flight.
package node
