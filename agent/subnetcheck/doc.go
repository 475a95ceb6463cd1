// Package subnetcheck decides whether a pod subnet's CIDRs may be used: not a special range
// (unspecified, loopback, link-local, multicast, reserved), and overlapping none of the
// networks a subnet must leave alone (the Service CIDRs, every Node's addresses, the networks
// the hosts' own interfaces are on, the join network and the other subnets). It is the one
// check the controller role (Subnet validation) and the node role (configuration at start,
// and the Subnets it routes) both use.
//
// It is pure: the callers gather the networks (Reserved) from the API, the configuration and
// the host, and it only compares. A refusal (*Conflict) names both sides.
package subnetcheck
