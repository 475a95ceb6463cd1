package ctltest

import (
	"context"
	"encoding/csv"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

// NB is a real ovsdb-server with the northbound schema and edgeovn's client connected to it.
type NB struct {
	Client *northbound.Client
	Server *ovsdbtest.Server
}

// StartNB starts the server (skipped, with the reason, without root or the OVS tools) and
// connects; both end with the test.
func StartNB(ctx context.Context, t testing.TB, log *slog.Logger) *NB {
	t.Helper()
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"))
	c, err := northbound.Connect(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}, Log: log})
	if err != nil {
		t.Fatalf("connect northbound: %v", err)
	}
	t.Cleanup(c.Close)
	return &NB{Client: c, Server: srv}
}

// Rows lists the rows a test compares, one line each, sorted, read with ovn-nbctl:
//
//	lsp SWITCH PORT ADDRESSES        every switch port but the router ports
//	policy PRIORITY MATCH ACTION NEXTHOPS
//	switch NAME
//	acl SWITCH PRIORITY DIRECTION MATCH ACTION
//	mcast SWITCH KEY=VALUE           each mcast_* key of the switch's other_config
//	addrset NAME ADDRESSES
func (nb *NB) Rows(t testing.TB) []string {
	t.Helper()
	lsps := byUUID(nb.list(t, "Logical_Switch_Port", "_uuid,name,type,addresses"))
	acls := byUUID(nb.list(t, "ACL", "_uuid,priority,direction,match,action"))
	var out []string
	for _, sw := range nb.list(t, "Logical_Switch", "name,ports,acls,other_config") {
		name := sw[0]
		out = append(out, "switch "+name)
		for _, kv := range strings.Fields(sw[3]) {
			if strings.HasPrefix(kv, "mcast_") {
				out = append(out, "mcast "+name+" "+kv)
			}
		}
		for _, uuid := range strings.Fields(sw[1]) {
			if p, ok := lsps[uuid]; ok && p[1] != "router" {
				out = append(out, strings.TrimSpace("lsp "+name+" "+p[0]+" "+p[2]))
			}
		}
		for _, uuid := range strings.Fields(sw[2]) {
			if a, ok := acls[uuid]; ok {
				out = append(out, "acl "+name+" "+strings.Join(a, " "))
			}
		}
	}
	for _, a := range nb.list(t, "Address_Set", "name,addresses") {
		out = append(out, strings.TrimSpace("addrset "+strings.Join(a, " ")))
	}
	for _, p := range nb.list(t, "Logical_Router_Policy", "priority,match,action,nexthops") {
		out = append(out, strings.TrimSpace("policy "+strings.Join(p, " ")))
	}
	slices.Sort(out)
	return out
}

// byUUID maps records whose first column is the row's UUID to their other columns.
func byUUID(recs [][]string) map[string][]string {
	m := make(map[string][]string, len(recs))
	for _, r := range recs {
		m[r[0]] = r[1:]
	}
	return m
}

// list runs ovn-nbctl find and returns one record per row, one string per column (a set's or
// map's members separated by spaces).
func (nb *NB) list(t testing.TB, table, columns string, where ...string) [][]string {
	t.Helper()
	raw := nb.Server.Run(t, "ovn-nbctl", append([]string{"--format=csv", "--data=bare", "--no-headings",
		"--columns=" + columns, "find", table}, where...)...)
	recs, err := csv.NewReader(strings.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatalf("parse ovn-nbctl find %s: %v: %s", table, err, raw)
	}
	return recs
}
