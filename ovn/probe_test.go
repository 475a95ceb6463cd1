package ovn_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/internal/ovsdbtest"
)

// TestProbe asks a real ovsdb-server: the database it serves passes over unix and TCP, a
// missing socket, a closed port and another database each fail naming the endpoint, and a
// list with one good endpoint passes.
func TestProbe(t *testing.T) {
	ctx := context.Background()
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"))
	for _, ep := range []string{srv.Endpoint, srv.TCPEndpoint} {
		if err := ovn.Probe(ctx, ovn.ProbeRequest{Endpoints: []string{ep}, Database: "OVN_Northbound"}); err != nil {
			t.Errorf("probe %s: %v", ep, err)
		}
	}
	missing := "unix:" + filepath.Join(t.TempDir(), "none.sock")
	for _, tt := range []struct {
		eps  []string
		db   string
		want string
	}{
		{[]string{missing}, "OVN_Northbound", "OVN_Northbound unreachable: " + missing},
		{[]string{"tcp:127.0.0.1:1"}, "OVN_Northbound", "tcp:127.0.0.1:1: dial tcp 127.0.0.1:1"},
		{[]string{srv.Endpoint}, "OVN_Southbound", "not OVN_Southbound"},
	} {
		err := ovn.Probe(ctx, ovn.ProbeRequest{Endpoints: tt.eps, Database: tt.db})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("probe %v for %s: %v, want an error containing %q", tt.eps, tt.db, err, tt.want)
		}
	}
	if err := ovn.Probe(ctx, ovn.ProbeRequest{Endpoints: []string{missing, srv.Endpoint}, Database: "OVN_Northbound"}); err != nil {
		t.Errorf("probe with one good endpoint of two: %v", err)
	}
}
