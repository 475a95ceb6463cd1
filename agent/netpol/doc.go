// Package netpol translates Kubernetes NetworkPolicies (networking.k8s.io/v1) into OVN rows:
// port groups, address sets and ACLs, as northbound.ACLGroupSpec values. It is pure: it reads
// a snapshot of pods and namespaces (Cluster) and writes nothing; the controller diffs its
// output against OVN and applies the difference.
//
// Shape of the rows:
//
//   - Each policy owns a port group "np.<hash>" of the pods it selects, an address set per
//     rule with peer selectors ("np.<hash>.in0_ip4": the peers' addresses), an address set
//     per named port value ("np.<hash>.in0.tcp8080_ip4": the pods on which the name
//     resolves to tcp/8080), and one allow-related ACL per rule (and per named port value).
//     Ingress rules are to-lport ACLs on outport; egress rules are from-lport ACLs on inport
//     with apply-after-lb, so they see a Service's backend after the switch's load balancer.
//   - Each namespace with policies owns two default-deny port groups "nsdeny.<hash>.in" and
//     ".eg" (the pods any policy of the namespace selects for that direction) with a drop
//     ACL; for ingress an allow from the nodes' join addresses of each family (address sets
//     "edgeovn.nodes_ip4" and "edgeovn.nodes_ip6", both always written: the host's kubelet
//     probes its pods through ovn0, over IPv6 too); for egress an allow of replies (ct.est && ct.rpl), because OVN
//     23.03 passes replies by itself in the to-lport and before-lb stages but not after the
//     load balancer; and with IPv6 an allow for neighbour discovery.
//
// Priorities: DenyPriority (1000) drops, AllowPriority (1001) allows. Every allow beats every
// drop, so what a pod may receive (or send) is the union of the rules of all policies that
// select it, and a pod that no policy selects for a direction stays open in it. The ACLs are
// stateful (allow-related): replies of an allowed connection pass both ways.
package netpol
