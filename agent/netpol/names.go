package netpol

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Priorities of edgeovn's policy ACLs: every allow beats the default deny.
const (
	DenyPriority  = 1000
	AllowPriority = 1001
)

// HostsAddressSet and HostsAddressSet6 hold the nodes' join (ovn0) addresses of each family,
// allowed into every selected pod (kubelet's probes come from there).
const (
	HostsAddressSet  = "edgeovn.nodes_ip4"
	HostsAddressSet6 = "edgeovn.nodes_ip6"
)

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// PortGroupName is the port group of the pods policy namespace/name selects. OVN names allow
// no '-', so the name is a hash; the rows' owner tags carry the readable name.
func PortGroupName(namespace, name string) string {
	return "np." + hash(namespace+"/"+name)
}

// DenyGroupNames are the namespace's default-deny port groups, ingress and egress.
func DenyGroupNames(namespace string) (ingress, egress string) {
	h := "nsdeny." + hash(namespace)
	return h + ".in", h + ".eg"
}

// aclName is an ACL's name in ovn-controller's log, within OVN's 63 bytes.
func aclName(format string, args ...any) string {
	s := fmt.Sprintf(format, args...)
	if len(s) > 63 {
		s = s[:63]
	}
	return s
}
