package secgroup

import (
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

// Priorities of a group's ACLs (doc.go): a rule's is RulePriority(priority).
const (
	HostsPriority     = 18500
	rulePriorityTop   = 18484 // Kube-OVN's SecurityGroupHighestPriority
	BasePriority      = 2005
	SameGroupPriority = 2004
	DropPriority      = 2003
)

// RulePriority is the ACL priority of a rule of priority p (1-16384): 18484 - p, as Kube-OVN.
func RulePriority(p int) int { return rulePriorityTop - p }

// PortGroupName is Kube-OVN's name of the group's port group.
func PortGroupName(group string) string {
	return strings.ReplaceAll("ovn.sg."+group, "-", ".")
}

// AddressSetName is Kube-OVN's name of the address set of the group's members' addresses of
// one family.
func AddressSetName(group string, v6 bool) string {
	suffix := ".associated.v4"
	if v6 {
		suffix = ".associated.v6"
	}
	return PortGroupName(group) + suffix
}

// Owner is the owner tag of a group's rows.
func Owner(group string) northbound.OwnerRef {
	return northbound.OwnerRef{Kind: ovn.KindSecurityGroup, Name: group}
}

// aclName is an ACL's name in ovn-controller's log, within OVN's 63 bytes.
func aclName(s string) string {
	if len(s) > northbound.MaxACLName {
		s = s[:northbound.MaxACLName]
	}
	return s
}
