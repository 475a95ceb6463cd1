package ctltest

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// PortGroupRows returns northbound's port groups with their ACLs and the address sets,
// sorted, one line a row:
//
//	pg NAME PORT...                       the members' port names
//	pgacl NAME DIRECTION PRIORITY ACTION MATCH
//	addrset NAME ADDRESS...
//
// skip leaves out the ACLs of those priorities (a feature's fixed rows).
func (nb *NB) PortGroupRows(t testing.TB, skip ...int) []string {
	t.Helper()
	lsps := byUUID(nb.list(t, "Logical_Switch_Port", "_uuid,name"))
	acls := byUUID(nb.list(t, "ACL", "_uuid,direction,priority,action,match"))
	var out []string
	for _, pg := range nb.list(t, "Port_Group", "name,ports,acls") {
		var ports []string
		for _, u := range strings.Fields(pg[1]) {
			ports = append(ports, lsps[u][0])
		}
		slices.Sort(ports)
		out = append(out, strings.TrimSpace("pg "+pg[0]+" "+strings.Join(ports, " ")))
		for _, u := range strings.Fields(pg[2]) {
			a, ok := acls[u]
			if !ok || slices.ContainsFunc(skip, func(p int) bool { return a[1] == strconv.Itoa(p) }) {
				continue
			}
			out = append(out, "pgacl "+pg[0]+" "+strings.Join(a, " "))
		}
	}
	for _, a := range nb.list(t, "Address_Set", "name,addresses") {
		addrs := strings.Fields(a[1])
		slices.Sort(addrs)
		out = append(out, strings.TrimSpace("addrset "+a[0]+" "+strings.Join(addrs, " ")))
	}
	slices.Sort(out)
	return out
}
