package southbound

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/internal/ovsdbtest"
)

// TestChassis serves the full southbound schema of the installed OVN (as a real server does),
// registers a chassis with ovn-sbctl, and reads it back through the reduced model.
func TestChassis(t *testing.T) {
	if _, err := exec.LookPath("ovn-sbctl"); err != nil {
		t.Skip("skipping: ovn-sbctl not installed")
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
