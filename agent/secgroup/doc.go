// Package secgroup translates Kube-OVN SecurityGroups (kubeovn.io/v1, parsed by package
// kubeovn) into OVN rows, as northbound.ACLGroupSpec values. It is pure: it reads a group's
// spec, its member pods' ports and addresses and the names of the groups that exist, and
// writes nothing; the controller (agent/controller/securitygroups) applies its output.
//
// Shape of a group's rows, all owned by the group (owner kind SecurityGroup, its name), with
// Kube-OVN's names: the port group "ovn.sg.<name>" ('-' as '.') of its members' ports; the
// address sets "ovn.sg.<name>.associated.v4" and ".v6" of their addresses (what a rule naming
// the group as remoteSecurityGroup, and allowSameGroupTraffic, match against); and ACLs on
// the port group, ingress to-lport on outport, egress from-lport on inport (before the
// switch's load balancers, as Kube-OVN: an egress rule sees a Service's virtual IP).
//
// Priorities (one OVN 23.03 ACL stage per direction holds every port group's and switch's
// ACLs; the first match by priority decides, so these numbers are the composition):
//
//	18700 / 18600  a private Subnet's host allow and drop (package subnetacl): above all below
//	18500          HostsPriority: ingress from the nodes' join network (kubelet probes)
//	2100 - 18483   the rules: 18484 - priority, as Kube-OVN (priority 1 is 18483)
//	2005           BasePriority: IPv6 neighbour discovery, as Kube-OVN's base ACLs
//	2004           SameGroupPriority: allowSameGroupTraffic, as Kube-OVN
//	2003           DropPriority: everything else to and from a member, as Kube-OVN's deny-all
//	1001 / 1000    NetworkPolicy (package netpol)
//
// So a pod in several groups gets the rule with the lowest priority number of all its groups
// that matches (allow or drop), then same-group traffic of any of its groups, then the drop;
// a pod named in no existing group is not fenced. Ingress to a member is decided by its groups
// alone: its NetworkPolicies' ACLs lie below the group's drop and are never reached. Egress of
// a member must pass its groups (before load balancing) and then its NetworkPolicies, whose
// egress ACLs are in OVN's later apply-after-lb stage: both must allow. Replies of an allowed
// connection pass (the ACLs are allow-related; OVN passes replies in these stages).
package secgroup
