package southbound

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestChassis serves the full southbound schema of the installed OVN (as a real server does),
// registers a chassis with ovn-sbctl, and reads it back through the reduced model.
func TestChassis(t *testing.T) {
	if _, err := exec.LookPath("ovn-sbctl"); err != nil {
		skip.Now(t, "ovn-sbctl not installed (make deps)")
	}
	srv := ovsdbtest.Start(t, "/usr/share/ovn/ovn-sb.ovsschema")
	if out, err := exec.Command("ovn-sbctl", "--db="+srv.Endpoint, "chassis-add", "edge-1", "geneve", "192.0.2.5").CombinedOutput(); err != nil {
		t.Fatalf("ovn-sbctl chassis-add: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch, ok, err := c.Chassis(ctx, "edge-1")
	if err != nil || !ok {
		t.Fatalf("Chassis(edge-1) = %+v, %v, %v", ch, ok, err)
	}
	if len(ch.Encaps) != 1 || ch.Encaps[0] != (Encap{Type: "geneve", IP: "192.0.2.5"}) {
		t.Errorf("encaps of edge-1: %+v", ch.Encaps)
	}
	if _, ok, err := c.Chassis(ctx, "edge-2"); ok || err != nil {
		t.Errorf("Chassis(edge-2), never registered: ok %v, err %v", ok, err)
	}
}

// TestDeleteChassis removes a registered chassis with its encapsulation and private rows, as
// ovn-sbctl chassis-del does, keeps the others, and deletes nothing the second time.
func TestDeleteChassis(t *testing.T) {
	if _, err := exec.LookPath("ovn-sbctl"); err != nil {
		skip.Now(t, "ovn-sbctl not installed (make deps)")
	}
	srv := ovsdbtest.Start(t, "/usr/share/ovn/ovn-sb.ovsschema")
	sbctl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("ovn-sbctl", append([]string{"--db=" + srv.Endpoint}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ovn-sbctl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for i, name := range []string{"edge-1", "edge-2"} {
		sbctl("chassis-add", name, "geneve", "192.0.2."+string(rune('5'+i)))
		sbctl("create", "Chassis_Private", "name="+name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if gone, err := c.DeleteChassis(ctx, "edge-1"); err != nil || !gone {
		t.Fatalf("DeleteChassis(edge-1) = %v, %v; want true, nil", gone, err)
	}
	for table, want := range map[string]string{"Chassis": "edge-2", "Chassis_Private": "edge-2", "Encap": "192.0.2.6"} {
		col := "name"
		if table == "Encap" {
			col = "ip"
		}
		if got := strings.TrimSpace(sbctl("--bare", "--columns="+col, "list", table)); got != want {
			t.Errorf("%s after deleting edge-1: %q, want only %q", table, got, want)
		}
	}
	if gone, err := c.DeleteChassis(ctx, "edge-1"); err != nil || gone {
		t.Errorf("DeleteChassis(edge-1) again = %v, %v; want false, nil", gone, err)
	}
	if _, err := c.DeleteChassis(ctx, ""); !errors.Is(err, ovn.ErrInvalid) {
		t.Errorf("DeleteChassis(\"\") = %v, want ErrInvalid", err)
	}
}
