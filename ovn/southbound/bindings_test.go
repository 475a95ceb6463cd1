package southbound

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
)

// TestBindingsOn serves the full southbound schema, binds logical ports to two chassis with
// ovn-sbctl, and reads one chassis's bindings through a client that monitors nothing: only
// its own ports come back, with their up column; a port released (chassis cleared, up=false,
// as ovn-controller leaves it) or rebound to the other chassis drops out.
func TestBindingsOn(t *testing.T) {
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
		return strings.TrimSpace(string(out))
	}
	sbctl("chassis-add", "edge-1", "geneve", "192.0.2.5")
	sbctl("chassis-add", "edge-2", "geneve", "192.0.2.6")
	dp := sbctl("create", "Datapath_Binding", "tunnel_key=1")
	bind := func(lsp, key, chassis, up string) {
		sbctl("create", "Port_Binding", "logical_port="+lsp, "datapath="+dp, "tunnel_key="+key)
		if chassis != "" {
			sbctl("set", "Port_Binding", lsp, "chassis="+sbctl("--bare", "--columns=_uuid", "find", "Chassis", "name="+chassis), "up="+up)
		}
	}
	bind("web.default", "1", "edge-1", "true")
	bind("db.default", "2", "edge-1", "false") // claimed, flows not installed yet
	bind("far.default", "3", "edge-2", "true")
	bind("free.default", "4", "", "")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	read := func(chassis string) Bindings {
		t.Helper()
		b, err := c.BindingsOn(ctx, chassis)
		if err != nil {
			t.Fatalf("BindingsOn(%s): %v", chassis, err)
		}
		return b
	}
	if b := read("edge-1"); !b.Registered || len(b.Up) != 2 || !b.UpHere("web.default") || b.UpHere("db.default") {
		t.Errorf("edge-1's bindings: %+v, want web.default up and db.default down only", b)
	}
	if _, ok, _ := c.Chassis(ctx, "edge-1"); ok {
		t.Error("a Dial client has a Chassis cache: it monitors something")
	}

	// What ovn-controller left in issue 29: the port released, up=false.
	sbctl("clear", "Port_Binding", "web.default", "chassis")
	sbctl("set", "Port_Binding", "web.default", "up=false")
	// And one rebound elsewhere.
	sbctl("set", "Port_Binding", "db.default", "chassis="+sbctl("--bare", "--columns=_uuid", "find", "Chassis", "name=edge-2"))
	if b := read("edge-1"); !b.Registered || len(b.Up) != 0 || b.UpHere("web.default") {
		t.Errorf("edge-1's bindings after the release and the move: %+v, want none", b)
	}
	if b := read("edge-2"); len(b.Up) != 2 || !b.UpHere("far.default") || b.UpHere("db.default") {
		t.Errorf("edge-2's bindings: %+v, want far.default up and db.default down", b)
	}
	if b := read("edge-9"); b.Registered || len(b.Up) != 0 {
		t.Errorf("a chassis never registered: %+v", b)
	}
	if _, err := c.BindingsOn(ctx, ""); !errors.Is(err, ovn.ErrInvalid) {
		t.Errorf("BindingsOn(\"\") = %v, want ErrInvalid", err)
	}
}
