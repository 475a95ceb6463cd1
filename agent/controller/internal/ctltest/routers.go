package ctltest

import (
	"slices"
	"strings"
	"testing"
)

// RouterRows returns northbound's routers with what hangs on them, sorted, one line a row:
//
//	router NAME
//	lrp ROUTER PORT NETWORKS
//	route ROUTER PREFIX NEXTHOP POLICY   (policy empty: dst-ip)
//	rpolicy ROUTER PRIORITY MATCH ACTION NEXTHOPS
func (nb *NB) RouterRows(t testing.TB) []string {
	t.Helper()
	lrps := byUUID(nb.list(t, "Logical_Router_Port", "_uuid,name,networks"))
	routes := byUUID(nb.list(t, "Logical_Router_Static_Route", "_uuid,ip_prefix,nexthop,policy"))
	policies := byUUID(nb.list(t, "Logical_Router_Policy", "_uuid,priority,match,action,nexthops"))
	var out []string
	for _, lr := range nb.list(t, "Logical_Router", "name,ports,static_routes,policies") {
		name := lr[0]
		out = append(out, "router "+name)
		for _, u := range strings.Fields(lr[1]) {
			if p, ok := lrps[u]; ok {
				out = append(out, strings.TrimSpace("lrp "+name+" "+strings.Join(p, " ")))
			}
		}
		for _, u := range strings.Fields(lr[2]) {
			if r, ok := routes[u]; ok {
				out = append(out, strings.TrimSpace("route "+name+" "+strings.Join(r, " ")))
			}
		}
		for _, u := range strings.Fields(lr[3]) {
			if p, ok := policies[u]; ok {
				out = append(out, strings.TrimSpace("rpolicy "+name+" "+strings.Join(p, " ")))
			}
		}
	}
	slices.Sort(out)
	return out
}
