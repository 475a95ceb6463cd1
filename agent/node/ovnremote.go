package node

import "strings"

// OVNRemote is ovn-controller's ovn-remote for the southbound endpoints: OVN's own form, a
// comma-separated list it tries in turn. With a raft cluster ovn-controller may stay on any
// member (it reads, and a follower forwards its few writes to the leader).
func OVNRemote(sb []string) string { return strings.Join(sb, ",") }
