package ovn_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/northbound"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
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

// TestProbeSilentMemberFirst: a raft member that accepts and never answers (as one whose host
// died behind a live address, every round trip a timeout) comes first in the list and the
// probe's deadline is short: the good member after it still answers within the deadline, so a
// dead first member never makes the whole cluster look unreachable.
func TestProbeSilentMemberFirst(t *testing.T) {
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"))
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
		}
	}()
	eps := []string{"tcp:" + silent.Addr().String(), srv.TCPEndpoint}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := ovn.Probe(ctx, ovn.ProbeRequest{Endpoints: eps, Database: "OVN_Northbound"}); err != nil {
		t.Errorf("probe %v: %v, want the second member's answer", eps, err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	err = ovn.Probe(ctx2, ovn.ProbeRequest{Endpoints: eps[:1], Database: "OVN_Northbound"})
	if err == nil || !strings.Contains(err.Error(), eps[0]) {
		t.Errorf("probe of the silent member alone: %v, want an error naming %s", err, eps[0])
	}
}

// TestConnectSilentMemberFirst: Connect given a raft member that accepts and never answers
// first in its list connects to the member after it, well within its context (libovsdb tries
// the endpoints in order, each bounded only by the context: without the ordering the silent
// member held the connect until the context ended).
func TestConnectSilentMemberFirst(t *testing.T) {
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "ovn-nb.ovsschema"))
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { conn.Close() })
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := northbound.Connect(ctx, ovn.ConnectRequest{Endpoints: []string{"tcp:" + silent.Addr().String(), srv.TCPEndpoint}})
	if err != nil {
		t.Fatalf("connect with a silent first member: %v", err)
	}
	c.Close()
}
