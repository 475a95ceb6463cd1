package ctltest

import (
	"slices"
	"strings"
	"testing"
)

// RouterRows returns northbound's routers with what hangs on them, sorted, one line a row:
//
//	router NAME
//	lrp ROUTER PORT NETWORKS [table=ROUTE_TABLE]
//	route ROUTER PREFIX NEXTHOP POLICY [table=ROUTE_TABLE] [ecmp_symmetric_reply=true]   (policy empty: dst-ip)
//	rpolicy ROUTER PRIORITY MATCH ACTION NEXTHOPS
func (nb *NB) RouterRows(t testing.TB) []string {
	t.Helper()
	lrps := byUUID(withRouteTable(nb.list(t, "Logical_Router_Port", "_uuid,name,networks,options")))
	routes := byUUID(withRouteTable(nb.list(t, "Logical_Router_Static_Route", "_uuid,ip_prefix,nexthop,policy,route_table,options")))
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

// withRouteTable turns the trailing options column of each record (and a route_table column
// before it, for routes) into "table=NAME" and "ecmp_symmetric_reply=true" fields, present only
// when set, so rows without them read as before.
func withRouteTable(recs [][]string) [][]string {
	for i, r := range recs {
		opts := strings.Fields(r[len(r)-1])
		r = r[:len(r)-1]
		table := ""
		if len(r) == 5 { // a route (_uuid,ip_prefix,nexthop,policy,route_table): its route_table
			table, r = r[4], r[:4]
		}
		for _, o := range opts {
			if v, ok := strings.CutPrefix(o, "route_table="); ok {
				table = v
			}
		}
		if table != "" {
			r = append(r, "table="+table)
		}
		if slices.Contains(opts, "ecmp_symmetric_reply=true") {
			r = append(r, "ecmp_symmetric_reply=true")
		}
		recs[i] = r
	}
	return recs
}
