package vswitch

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/ovsdbtest"
	"github.com/edgeovn/edgeovn/ovn/vswitchdb"
)

type fixture struct {
	c   *Client
	srv *ovsdbtest.Server
	ctx context.Context
}

// newFixture starts an Open_vSwitch database, initializes it as ovs-ctl would, runs the
// given ovs-vsctl commands (as an administrator before edgeovn starts), and connects.
func newFixture(t *testing.T, before ...[]string) fixture {
	t.Helper()
	srv := ovsdbtest.Start(t, ovsdbtest.SchemaPath(t, "vswitch.ovsschema"))
	srv.Run(t, "ovs-vsctl", "--no-wait", "init")
	for _, args := range before {
		srv.Run(t, "ovs-vsctl", append([]string{"--no-wait"}, args...)...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := Connect(ctx, ovn.ConnectRequest{Endpoints: []string{srv.Endpoint}, Log: log})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(c.Close)
	return fixture{c: c, srv: srv, ctx: ctx}
}

func (f fixture) mustWrite(t *testing.T, want int64, what string, fn func() error) {
	t.Helper()
	before := f.c.writes.Load()
	if err := fn(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := f.c.writes.Load() - before; got != want {
		t.Fatalf("%s: %d write transactions, want %d", what, got, want)
	}
}

func (f fixture) vsctl(t *testing.T, args ...string) string {
	t.Helper()
	// ovs-vsctl quotes only values that need it; compare without quotes.
	return strings.Trim(strings.TrimSpace(f.srv.Run(t, "ovs-vsctl", append([]string{"--no-wait"}, args...)...)), `"`)
}

var brInt = BridgeSpec{Name: "br-int", DatapathType: DatapathNetdev, Owner: "node1"}

func TestEnsureBridge(t *testing.T) {
	f := newFixture(t, []string{"add-br", "br-admin"})
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	checks := map[string]string{
		"fail_mode":                     "secure",
		"datapath_type":                 "netdev",
		"other_config:disable-in-band":  "true",
		"external_ids:" + ovn.VendorKey: ovn.Vendor,
		"external_ids:" + ovn.OwnerKey:  "node1",
	}
	for col, want := range checks {
		if got := f.vsctl(t, "get", "Bridge", "br-int", col); got != want {
			t.Errorf("br-int %s = %q, want %q", col, got, want)
		}
	}
	if got := f.vsctl(t, "get", "Interface", "br-int", "type"); got != "internal" {
		t.Errorf("br-int interface type = %q, want internal", got)
	}
	if got := f.vsctl(t, "list-br"); got != "br-admin\nbr-int" {
		t.Errorf("list-br = %q", got)
	}
	f.mustWrite(t, 0, "ensure bridge again", func() error { return f.c.EnsureBridge(f.ctx, brInt) })

	sys := brInt
	sys.DatapathType = DatapathSystem
	f.mustWrite(t, 1, "change datapath", func() error { return f.c.EnsureBridge(f.ctx, sys) })
	if got := f.vsctl(t, "get", "Bridge", "br-int", "datapath_type"); got != "system" {
		t.Errorf("datapath_type after change = %q", got)
	}

	admin := BridgeSpec{Name: "br-admin", DatapathType: DatapathNetdev}
	if err := f.c.EnsureBridge(f.ctx, admin); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("EnsureBridge over an admin's bridge: %v, want ErrNotOwned", err)
	}
	if got := f.vsctl(t, "get", "Bridge", "br-admin", "fail_mode"); got != "[]" {
		t.Errorf("admin's bridge changed: fail_mode %q", got)
	}

	// br-int made by ovn-controller before edgeovn started: adopted, tagged, configured.
	admin.Adopt = true
	f.mustWrite(t, 1, "adopt bridge", func() error { return f.c.EnsureBridge(f.ctx, admin) })
	if got := f.vsctl(t, "get", "Bridge", "br-admin", "fail_mode"); got != "secure" {
		t.Errorf("adopted bridge fail_mode %q, want secure", got)
	}
	if got := f.vsctl(t, "get", "Bridge", "br-admin", "external_ids:vendor"); got != "edgeovn" {
		t.Errorf("adopted bridge not tagged: vendor=%q", got)
	}
	f.mustWrite(t, 0, "adopt again", func() error { return f.c.EnsureBridge(f.ctx, admin) })
}

func TestSetOVNConfig(t *testing.T) {
	f := newFixture(t, []string{"set", "Open_vSwitch", ".", "external_ids:hostname=node1", "external_ids:ovn-encap-ip=192.0.2.9"})
	cfg := map[string]string{
		KeySystemID:                "node1",
		KeyOVNRemote:               "tcp:127.0.0.1:6642",
		KeyEncapType:               "geneve",
		KeyEncapIP:                 "192.0.2.1",
		"ovn-bridge-datapath-type": DatapathNetdev,
	}
	f.mustWrite(t, 1, "set config", func() error { return f.c.SetOVNConfig(f.ctx, cfg) })
	for k, v := range merged(cfg, map[string]string{"hostname": "node1"}) {
		if got := f.vsctl(t, "get", "Open_vSwitch", ".", "external_ids:"+k); got != v {
			t.Errorf("external_ids:%s = %s, want %s", k, got, v)
		}
	}
	f.mustWrite(t, 0, "set same config", func() error { return f.c.SetOVNConfig(f.ctx, cfg) })
	f.mustWrite(t, 1, "change one key", func() error {
		return f.c.SetOVNConfig(f.ctx, map[string]string{KeyEncapIP: "192.0.2.2"})
	})
	if got := f.vsctl(t, "get", "Open_vSwitch", ".", "external_ids:"+KeyEncapIP); got != "192.0.2.2" {
		t.Errorf("encap ip = %s", got)
	}
	if got := f.vsctl(t, "get", "Open_vSwitch", ".", "external_ids:"+KeyOVNRemote); got != "tcp:127.0.0.1:6642" {
		t.Errorf("ovn-remote lost: %s", got)
	}
	if err := f.c.SetOVNConfig(f.ctx, map[string]string{"": "x"}); !errors.Is(err, ovn.ErrInvalid) {
		t.Errorf("empty key: %v, want ErrInvalid", err)
	}
	f.mustWrite(t, 1, "unset encap ip", func() error { return f.c.UnsetOVNConfig(f.ctx, KeyEncapIP, "no-such-key") })
	if got := f.vsctl(t, "get", "Open_vSwitch", ".", "external_ids"); strings.Contains(got, KeyEncapIP+"=") ||
		!strings.Contains(got, "hostname=node1") || !strings.Contains(got, KeyOVNRemote) {
		t.Errorf("after unsetting %s, external_ids = %s: want it gone and the rest kept", KeyEncapIP, got)
	}
	f.mustWrite(t, 0, "unset absent keys", func() error { return f.c.UnsetOVNConfig(f.ctx, KeyEncapIP) })
}

func TestAddAndDeletePort(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	spec := PortSpec{Bridge: "br-int", Name: "veth1_h", IfaceID: "web.default",
		ExternalIDs: map[string]string{"pod": "default/web"}}
	f.mustWrite(t, 1, "add port", func() error { return f.c.AddPort(f.ctx, spec) })
	if got := f.vsctl(t, "list-ports", "br-int"); got != "veth1_h" {
		t.Fatalf("list-ports = %q", got)
	}
	if got := f.vsctl(t, "get", "Interface", "veth1_h", "external_ids:iface-id"); got != "web.default" {
		t.Fatalf("iface-id = %s", got)
	}
	f.mustWrite(t, 0, "add same port", func() error { return f.c.AddPort(f.ctx, spec) })

	// ovn-controller's key survives a tag change but not an iface-id change.
	f.setInterfaceKey(t, "veth1_h", KeyOVNInstalled, "true")
	spec.ExternalIDs = map[string]string{"pod": "default/web", "sandbox": "abc"}
	f.mustWrite(t, 1, "add tag", func() error { return f.c.AddPort(f.ctx, spec) })
	if got := f.vsctl(t, "get", "Interface", "veth1_h", "external_ids:ovn-installed"); got != "true" {
		t.Errorf("ovn-installed lost on tag change: %s", got)
	}
	spec.IfaceID = "web2.default"
	f.mustWrite(t, 1, "change iface-id", func() error { return f.c.AddPort(f.ctx, spec) })
	ports, err := f.c.Ports(f.ctx, "br-int")
	if err != nil || len(ports) != 1 || ports[0].Name != "veth1_h" || ports[0].IfaceID != "web2.default" ||
		ports[0].ExternalIDs["sandbox"] != "abc" {
		t.Fatalf("Ports = %+v, %v", ports, err)
	}
	if _, ok := ports[0].ExternalIDs[KeyOVNInstalled]; ok {
		t.Errorf("stale ovn-installed kept after iface-id change: %v", ports[0].ExternalIDs)
	}

	f.mustWrite(t, 1, "delete port", func() error { return f.c.DeletePort(f.ctx, "br-int", "veth1_h") })
	if got := f.vsctl(t, "list-ports", "br-int"); got != "" {
		t.Fatalf("list-ports after delete = %q", got)
	}
	if got := f.vsctl(t, "--columns=name", "find", "Interface", "name=veth1_h"); got != "" {
		t.Fatalf("interface left behind: %q", got)
	}
	f.mustWrite(t, 0, "delete again", func() error { return f.c.DeletePort(f.ctx, "br-int", "veth1_h") })
	f.mustWrite(t, 0, "delete from missing bridge", func() error { return f.c.DeletePort(f.ctx, "br-nope", "veth1_h") })
}

func TestPortsAndForeignRows(t *testing.T) {
	f := newFixture(t)
	f.mustWrite(t, 1, "create bridge", func() error { return f.c.EnsureBridge(f.ctx, brInt) })
	f.insertForeignPort(t, "br-int", "eth9")
	if err := f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "eth9", IfaceID: "x.y"}); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("AddPort over a foreign port: %v, want ErrNotOwned", err)
	}
	if err := f.c.DeletePort(f.ctx, "br-int", "eth9"); !errors.Is(err, ovn.ErrNotOwned) {
		t.Errorf("DeletePort of a foreign port: %v, want ErrNotOwned", err)
	}
	if ports, err := f.c.Ports(f.ctx, "br-int"); err != nil || len(ports) != 0 {
		t.Errorf("Ports lists foreign or internal ports: %+v, %v", ports, err)
	}
	if got := f.vsctl(t, "list-ports", "br-int"); got != "eth9" {
		t.Errorf("foreign port changed: list-ports %q", got)
	}
	if err := f.c.AddPort(f.ctx, PortSpec{Bridge: "br-nope", Name: "veth2_h", IfaceID: "a.b"}); !errors.Is(err, ovn.ErrNotFound) {
		t.Errorf("AddPort to a missing bridge: %v, want ErrNotFound", err)
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	f := newFixture(t)
	bad := map[string]func() error{
		"bridge empty name":   func() error { return f.c.EnsureBridge(f.ctx, BridgeSpec{DatapathType: DatapathNetdev}) },
		"bridge bad datapath": func() error { return f.c.EnsureBridge(f.ctx, BridgeSpec{Name: "br-int", DatapathType: "dpdk"}) },
		"bridge name too long": func() error {
			return f.c.EnsureBridge(f.ctx, BridgeSpec{Name: "br-0123456789abc", DatapathType: DatapathNetdev})
		},
		"port no iface-id":    func() error { return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", Name: "veth1"}) },
		"port empty name":     func() error { return f.c.AddPort(f.ctx, PortSpec{Bridge: "br-int", IfaceID: "a.b"}) },
		"delete empty bridge": func() error { return f.c.DeletePort(f.ctx, "", "veth1") },
	}
	for name, fn := range bad {
		if err := fn(); !errors.Is(err, ovn.ErrInvalid) {
			t.Errorf("%s: error %v, want ErrInvalid", name, err)
		}
	}
	if n := f.c.writes.Load(); n != 0 {
		t.Fatalf("bad input caused %d writes", n)
	}
	if got := f.vsctl(t, "list-br"); got != "" {
		t.Fatalf("bad input created bridges: %q", got)
	}
}

func (f fixture) setInterfaceKey(t *testing.T, iface, key, value string) {
	t.Helper()
	cur := &vswitchdb.Interface{Name: iface}
	if err := f.c.ovs.Get(f.ctx, cur); err != nil {
		t.Fatalf("get interface %s: %v", iface, err)
	}
	op := setKeys(vswitchdb.InterfaceTable, cur.UUID, "external_ids", map[string]string{key: value}, nil)
	if err := ovn.Transact(f.ctx, f.c.ovs, []ovsdb.Operation{op}); err != nil {
		t.Fatalf("set %s on %s: %v", key, iface, err)
	}
}

// insertForeignPort adds a port without edgeovn's tags, as ovs-vsctl add-port would.
func (f fixture) insertForeignPort(t *testing.T, bridge, name string) {
	t.Helper()
	br := &vswitchdb.Bridge{Name: bridge}
	if err := f.c.ovs.Get(f.ctx, br); err != nil {
		t.Fatal(err)
	}
	iface := &vswitchdb.Interface{UUID: "i", Name: name}
	port := &vswitchdb.Port{UUID: "p", Name: name, Interfaces: []string{"i"}}
	ops, err := f.c.ovs.Create([]model.Model{iface, port}...)
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, ovn.MutateRefs(vswitchdb.BridgeTable, br.UUID, "ports", "insert", "p"))
	if err := ovn.Transact(f.ctx, f.c.ovs, ops); err != nil {
		t.Fatalf("insert foreign port: %v", err)
	}
}
