// Package sourceranges reads which clients a LoadBalancer Service admits on its LoadBalancer
// IPs: spec.loadBalancerSourceRanges, or, when that is empty, the older annotation
// service.beta.kubernetes.io/load-balancer-source-ranges (a comma-separated list), as
// kube-proxy reads them. The node role filters arriving traffic with them (nftables) and the
// controller role reports the entries that do not parse (an Event naming each), from the
// same reading.
//
// It is pure: no API calls, no host state. An entry that does not parse is left out and
// returned as an error wrapping ErrBadRange; the Service stays restricted (Restricted), so a
// bad entry never opens a LoadBalancer IP to every client.
package sourceranges
