package subnetacl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/ovnmatch"
)

// EWTrafficPriority is Kube-OVN's AllowEWTrafficPriority: the same-subnet allows of
// allowEWTraffic, above its subnet ACLs' usual 1002 and below a private Subnet's drop.
const EWTrafficPriority = 1900

// ErrBadACL marks a Subnet ACL that cannot be written; its text names the entry and field.
var ErrBadACL = errors.New("invalid subnet acl")

// actions are the ACL actions OVN 23.03 has (Kube-OVN's CRD lists the same).
var actions = []string{nbdb.ACLActionAllow, nbdb.ACLActionAllowRelated, nbdb.ACLActionAllowStateless,
	nbdb.ACLActionDrop, nbdb.ACLActionReject}

// CheckACLs reports the first entry of spec.acls OVN would refuse or ignore, naming it
// (acls[i].field): a direction other than from-lport/to-lport, a priority outside 0-32767,
// an action OVN lacks, a match OVN's parser would not take (package ovnmatch), or an entry
// repeating another's direction, priority and match.
func CheckACLs(acls []kubeovn.ACL) error {
	type key struct {
		dir   string
		prio  int
		match string
	}
	seen := map[key]int{}
	for i, a := range acls {
		at := "acls[" + strconv.Itoa(i) + "]"
		switch {
		case a.Direction != nbdb.ACLDirectionFromLport && a.Direction != nbdb.ACLDirectionToLport:
			return fmt.Errorf("%w: %s.direction %q: want from-lport or to-lport", ErrBadACL, at, a.Direction)
		case a.Priority < 0 || a.Priority > 32767:
			return fmt.Errorf("%w: %s.priority %d: outside 0-32767", ErrBadACL, at, a.Priority)
		case !slices.Contains(actions, a.Action):
			return fmt.Errorf("%w: %s.action %q: want one of %v", ErrBadACL, at, a.Action, actions)
		}
		if err := ovnmatch.Check(a.Match); err != nil {
			return fmt.Errorf("%w: %s.match: %w", ErrBadACL, at, err)
		}
		k := key{a.Direction, a.Priority, a.Match}
		if j, ok := seen[k]; ok {
			return fmt.Errorf("%w: %s repeats acls[%d] (same direction, priority and match)", ErrBadACL, at, j)
		}
		seen[k] = i
	}
	return nil
}

// custom returns the Subnet's own ACLs as Kube-OVN writes them (UpdateLogicalSwitchACL):
// each entry of spec.acls at its priority, and with allowEWTraffic an allow of traffic within
// each of the Subnet's CIDRs in both directions at EWTrafficPriority. Without acls there is
// none, allowEWTraffic included (Kube-OVN deletes the Subnet's ACLs and stops there).
func custom(r Request) []northbound.ACLRule {
	if len(r.ACLs) == 0 {
		return nil
	}
	var out []northbound.ACLRule
	if r.AllowEWTraffic {
		for _, f := range families {
			for _, p := range ofFamily(r.CIDRs, f) {
				m := fmt.Sprintf("%s.src == %s && %s.dst == %s", f.field, p, f.field, p)
				for _, dir := range []nbdb.ACLDirection{nbdb.ACLDirectionToLport, nbdb.ACLDirectionFromLport} {
					out = append(out, northbound.ACLRule{Direction: dir, Priority: EWTrafficPriority, Match: m,
						Action: nbdb.ACLActionAllow, Name: name(r.Subnet, "ew-"+f.field)})
				}
			}
		}
	}
	for i, a := range r.ACLs {
		out = append(out, northbound.ACLRule{Direction: a.Direction, Priority: a.Priority, Match: a.Match,
			Action: a.Action, Name: name(r.Subnet, "acl"+strconv.Itoa(i))})
	}
	return out
}
