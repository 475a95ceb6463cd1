// Package subnets is the controller role's Subnets: it turns kubeovn.io/v1 Subnets into IPAM
// subnets and logical switches on the cluster router, writes their status, and chooses a
// pod's subnet. It owns the Subnet objects' status and finalizer, the set of applied Subnets
// (what pods may be given addresses in), each Subnet's rows in northbound (kind Subnet: its
// switch, router port, allow policies and isolation ACLs), its IPAM subnet, and the namespaces'
// Kube-OVN annotations. It shares with the core only what its Request carries (the API
// clients, the northbound client, the IPAM, the event recorder, the logger, the metrics, the
// pod and node listers, the configuration's networks, and a call that queues the pods waiting
// for an address); the core asks it a pod's subnet (PodSubnet) and a subnet's network
// (Network), and tells it a subnet's addresses changed (Touched). Its Subnet and Vpc
// informers are the term's (kubeapi.Informers.Dynamic), shared with packages vpcs and
// ovnnat: one list and one watch of each per term; its Vlan and ProviderNetwork informers
// are its own, stopped by Shutdown.
//
// At the start of a term the role installs the kubeovn.io/v1 Subnet CRD when the cluster has
// none and creates the ovn-default and join Subnet objects from the configuration when missing
// (builtin.go). Every Subnet is applied before the pods are reconciled (their claims name
// subnets the IPAM must know): its network (package kubeovn parses cidrBlock, gateway,
// excludeIps, protocol) becomes an IPAM subnet, a logical switch with its router port on the
// cluster router, an allow policy that keeps traffic to it off the distributed gateway's
// reroutes, the Services' load balancer group (sync.go), and, for a private Subnet, the
// isolation ACLs on its switch (acls.go, package subnetacl; owned by the Subnet, removed when
// private is turned off, announced with nb_cfg like a policy change; an invalid allowSubnets
// entry refuses the spec like any other invalid field). A Subnet that does not parse, overlaps
// another (the one applied first, in this term or an earlier one, keeps its CIDR), changes its
// CIDR, or overlaps a special range, a Service CIDR, a Node's InternalIP or ExternalIP, or a
// network a host's interfaces are on (each node role's edgeovn.io/host-networks;
// CIDRReserved, package subnetcheck, reserved.go; a change of a Node's addresses or networks
// checks every Subnet again), or has a family the cluster has not (FamiliesDifferFromCluster:
// no host has a join address of it) is refused: Validated/Ready False and Error True with the reason
// naming both sides, and a Warning Event; what was applied stays (a refused change that keeps
// the applied cidrBlock leaves the Subnet Ready). ovn-default and join take the
// configuration's families: dual stack ("v4,v6" cidrBlock and gateway) when it is. Status (status.go):
// Kube-OVN's conditions, edgeovn's Unsupported naming each spec field it does not implement,
// and the v4/v6 used and available counts (written at most once a second per subnet while
// pods come and go). A deleted Subnet is held by the finalizer edgeovn.io/subnet while pods
// hold addresses in it (Ready False, SubnetInUse, naming them); its last pod's release lets it
// go with its rows and IPAM subnet. A pod's subnet (namespaces.go): its
// ovn.kubernetes.io/logical_switch annotation, else the Subnets whose spec.namespaces lists its
// namespace, else a logical_switch a person set on the namespace, else the default (a Subnet
// marked default, the oldest, else ovn-default); namespaces get Kube-OVN's annotations of
// their subnets (logical_switch, cidr, exclude_ips).
//
// The other fields of Kube-OVN's Subnet edgeovn acts on: spec.acls and allowEWTraffic are
// ACLs on the switch beside the isolation's, in the same Subnet-owned set (acls.go, package
// subnetacl; an entry OVN would refuse is refused by name in validate, before anything is
// written); enableMulticastSnoop is the switch's mcast_* other_config (multicast.go); a
// centralized gatewayType is a router policy per family above the distributed gateway's,
// rerouting the Subnet's outside traffic to the join address of the first Ready gateway host,
// or with enableEcmp to every Ready one's (one policy, several next hops); the hosts are
// gatewayNode's, or the Nodes gatewayNodeSelectors match when it is empty (gateway.go; a
// Node's readiness, join address or labels changing, or a Node added or deleted, queues every
// Subnet, so the gateway follows; status.activateGateway names the hosts in use; a gatewayNode
// naming no Node, or a selector that does not parse, is refused); spec.routeTable is the
// router port's options:route_table (the Vpc's routes of that table apply to the Subnet);
// spec.mtu is checked here (68-65535, 1280 with IPv6) and set on the pods'
// interfaces by the node role; disableGatewayCheck changes nothing (no gateway check at ADD).
//
// A Subnet with spec.vlan is an underlay subnet (underlay.go): its Vlan (a Vlan informer queues
// the Subnets that name it) must exist and be valid, else the Subnet is refused naming
// spec.vlan; its switch gets a localnet port on the Vlan's provider with its tag, and no router
// port unless logicalGateway (its pods' gateway is the site's router); it is checked only
// against the Service CIDRs and special ranges (it is usually the hosts' own LAN). With
// u2oInterconnection (u2o.go) the switch also gets a router port at a u2o address (spec's, else
// the status's, else the first free one; excluded from the IPAM subnet, written in
// status.u2oInterconnectionIP/MAC/VPC), on the cluster router Kube-OVN's allow (29400) and
// physical-gateway reroute (29000) policies, on a custom VPC's router (the switch's router
// there, spec.vpc) a src-ip route per family to spec.gateway instead, owned by kind
// U2OInterconnection, and NB_Global use_ct_inv_match=false while any Subnet has it or is an
// underlay one with logicalGateway (removed, only if edgeovn set it, when none is). The
// controller also writes the underlay statuses (vlanstatus.go): ProviderNetwork status.vlans, Vlan status.subnets and
// status.conflict (a Vlan with the id of one in use or older on its provider; its Subnets are
// refused VlanConflict).
//
// A Subnet with spec.vpc other than ovn-cluster is a custom VPC's (vpc.go): its Vpc (the
// term's Vpc informer, shared with package vpcs, queues the Subnets that name it) must exist,
// else it is refused naming spec.vpc (VpcNotFound); its switch's router port is on the Vpc's router (created here when the
// Subnet comes before its Vpc's own sync; owned by the Vpc, package vpcs), with no allow
// policy; a change of an applied Subnet's VPC is refused. Overlap is checked only between
// Subnets of one VPC (the IPAM keys addresses by subnet, so two VPCs' Subnets may share a
// CIDR), and a custom VPC's Subnet only against the Service CIDRs and special ranges (no host
// routes to it). A namespace that no Subnet lists and that a Vpc's spec.namespaces lists gets
// the Vpc's defaultSubnet.
//
// Concurrency: the applied set is read by the pod workers and written by the Subnet worker,
// under a read-write lock; one worker syncs Subnets, one namespaces.
package subnets
