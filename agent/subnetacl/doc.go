// Package subnetacl turns a Kube-OVN Subnet's ACL fields (spec.private and
// spec.allowSubnets; spec.acls and allowEWTraffic in custom.go) into OVN ACLs on the Subnet's logical switch, as northbound.ACLRule
// values. It is pure: the controller applies its output with northbound.EnsureSwitchACLs, owned
// by the Subnet, so the rows go with the Subnet and a start-up reconcile of an unchanged Subnet
// writes nothing.
//
// What a private Subnet lets through is Kube-OVN's rule: traffic within its own CIDRs, between
// them and the CIDRs of allowSubnets (both ways), and from the nodes' join network (the host's
// kubelet probes its pods through ovn0; the gateway lies inside the Subnet's CIDR). Everything
// else to and from its pods is dropped, in each family: the other family entirely when the
// Subnet has no CIDR of it. Replies of an allowed connection pass (the ACLs make the switch
// stateful), so a host's probe gets its answer while a private pod cannot open a connection to
// the host itself. The rules are to-lport ACLs on the switch: they see a packet as it leaves
// the switch, towards a pod (arriving) or towards the cluster router (departing), after the
// switch's load balancers, so a Service counts by its backends' addresses.
//
// Composition with NetworkPolicy (package netpol, priorities 1000 and 1001, port-group ACLs in
// the same OVN ACL stages): the isolation is one drop ACL whose match is "not allowed by the
// Subnet" at DropPriority, above every policy ACL, and no allow that could short-circuit a
// policy's drop; so what passes is what both the Subnet and the policies allow. A
// NetworkPolicy cannot open a private Subnet to others, and a private Subnet does not undo a
// policy's default deny inside it. The one allow, from the join network at HostsPriority, is
// what edgeovn's policies allow anyway. (Kube-OVN puts its subnet rules at 1000-1001 under
// its policies at 2000-2001, so there a policy does open a private subnet; edgeovn does not.)
// The same holds for SecurityGroups (package secgroup, 2003-18500): DropPriority and
// HostsPriority (18600, 18700) lie above them, so no group's allow rule opens a private
// Subnet either.
//
// spec.acls are written as Kube-OVN writes them: each entry on the switch at its own
// priority, direction, match and action (CheckACLs refuses, naming acls[i] and the field, what
// OVN would not take: the match through package ovnmatch); allowEWTraffic adds Kube-OVN's
// same-subnet allows (to-lport and from-lport, "src and dst within the CIDR") at 1900, and
// only with acls, as Kube-OVN does. They sit in the same ACL stages as NetworkPolicy's
// (1000/1001) and the isolation's (18600/18700), ordered by priority alone: Kube-OVN's usual
// 1002 drop is above every policy allow (in Kube-OVN, whose policies are at 2000-2001, a
// policy allow wins over it), allowEWTraffic's 1900 allow is above a policy's default deny
// (as in Kube-OVN), and a private Subnet's drop is above both.
package subnetacl
