package inspect

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ipam"
	"github.com/edgeovn/edgeovn/ovn/northbound"
)

func TestLoadedConf(t *testing.T) {
	dir := t.TempDir()
	if got, err := loadedConf(dir); got != "" || err != nil {
		t.Fatalf("empty dir: %q, %v", got, err)
	}
	for _, f := range []string{"10-flannel.conflist", "01-edgeovn.conflist", "00-notes.txt", "README"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := loadedConf(dir); got != "01-edgeovn.conflist" {
		t.Fatalf("loaded %q, want 01-edgeovn.conflist (other extensions are not configs)", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "00-bridge.conf"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := loadedConf(dir); got != "00-bridge.conf" {
		t.Fatalf("loaded %q, want 00-bridge.conf, which sorts first", got)
	}
}

func TestCheckConfList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "01-edgeovn.conflist")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"plugins":[{"type":"edgeovn","serverSocket":"/run/edgeovn/cni.sock"},{"type":"portmap"}]}`)
	if err := checkConfList(path, "edgeovn", "/run/edgeovn/cni.sock"); err != nil {
		t.Fatal(err)
	}
	if err := checkConfList(path, "edgeovn", "/tmp/other.sock"); err == nil || !strings.Contains(err.Error(), "/tmp/other.sock") {
		t.Fatalf("socket mismatch: %v", err)
	}
	write(`{"plugins":[{"type":"bridge"}]}`)
	if err := checkConfList(path, "edgeovn", "/run/edgeovn/cni.sock"); err == nil || !strings.Contains(err.Error(), `not "edgeovn"`) {
		t.Fatalf("another plugin first: %v", err)
	}
}

func TestDisagreements(t *testing.T) {
	ip := netip.MustParseAddr
	allocs := []ipam.Allocation{
		{Subnet: "ovn-default", Owner: ipam.Owner{Pod: "default/a", Interface: "eth0"}, IPs: []netip.Addr{ip("10.42.0.5")}},
		{Subnet: "ovn-default", Owner: ipam.Owner{Pod: "default/b", Interface: "eth0"}, IPs: []netip.Addr{ip("10.42.0.6")}},
		{Subnet: "ovn-default", Owner: ipam.Owner{Pod: "default/c", Interface: "eth0"}, IPs: []netip.Addr{ip("10.42.0.7")}},
		{Subnet: "join", Owner: ipam.Owner{Pod: "node:edge-1", Interface: "ovn0"}, IPs: []netip.Addr{ip("100.64.0.2")}},
	}
	ports := []northbound.PodPort{
		{Name: "a.default", Owner: "default/a", IPs: []netip.Addr{ip("10.42.0.5")}},
		{Name: "b.default", Owner: "default/b", IPs: []netip.Addr{ip("10.42.0.9")}},
		{Name: "d.default", Owner: "default/d", IPs: []netip.Addr{ip("10.42.0.8")}},
	}
	got := strings.Join(disagreements(allocs, ports), "\n")
	want := strings.Join([]string{
		"default/b: IPAM holds [10.42.0.6], port b.default in NB has [10.42.0.9]",
		"default/c: IPAM holds [10.42.0.7], no port in NB",
		"default/d: port d.default in NB ([10.42.0.8]), no allocation in the IPAM",
	}, "\n")
	if got != want {
		t.Fatalf("disagreements:\n%s\nwant:\n%s", got, want)
	}
	if d := disagreements(allocs[:1], ports[:1]); len(d) != 0 {
		t.Fatalf("agreeing IPAM and NB: %v", d)
	}
}
