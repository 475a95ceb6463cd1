package northbound

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func TestGatewayMAC(t *testing.T) {
	tests := []struct {
		ip   string
		want string
	}{
		{"10.42.0.1", "0a:58:0a:2a:00:01"},
		{"100.64.0.1", "0a:58:64:40:00:01"},
		{"::ffff:10.42.0.1", "0a:58:0a:2a:00:01"},
	}
	for _, tt := range tests {
		if got := GatewayMAC(netip.MustParseAddr(tt.ip)).String(); got != tt.want {
			t.Errorf("GatewayMAC(%s) = %s, want %s", tt.ip, got, tt.want)
		}
	}
	a := GatewayMAC(netip.MustParseAddr("fd00::1"))
	b := GatewayMAC(netip.MustParseAddr("fd00::2"))
	if a.String() == b.String() || a[0] != 0x0a || a.String() != GatewayMAC(netip.MustParseAddr("fd00::1")).String() {
		t.Errorf("IPv6 MACs not distinct, local, and stable: %s %s", a, b)
	}
}

func TestValidateNetwork(t *testing.T) {
	tests := []struct {
		name    string
		cidr    netip.Prefix
		gw      netip.Addr
		wantErr string
	}{
		{"ok", netip.MustParsePrefix("10.42.0.0/16"), netip.MustParseAddr("10.42.0.1"), ""},
		{"ok v6", netip.MustParsePrefix("fd00:42::/64"), netip.MustParseAddr("fd00:42::1"), ""},
		{"ok /31 first", netip.MustParsePrefix("10.0.0.0/31"), netip.MustParseAddr("10.0.0.0"), ""},
		{"invalid prefix", netip.Prefix{}, netip.MustParseAddr("10.42.0.1"), "invalid CIDR"},
		{"host bits", netip.MustParsePrefix("10.42.0.1/16"), netip.MustParseAddr("10.42.0.1"), "host bits set"},
		{"no gateway", netip.MustParsePrefix("10.42.0.0/16"), netip.Addr{}, "gateway: missing or invalid"},
		{"outside", netip.MustParsePrefix("10.42.0.0/16"), netip.MustParseAddr("10.43.0.1"), "outside CIDR 10.42.0.0/16"},
		{"network address", netip.MustParsePrefix("10.42.0.0/16"), netip.MustParseAddr("10.42.0.0"), "network address"},
	}
	for _, tt := range tests {
		err := validateNetwork("subnet x", tt.cidr, tt.gw)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, ovn.ErrInvalid) || !contains(err, tt.wantErr) {
			t.Errorf("%s: error %v, want ErrInvalid mentioning %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestPodPortSpecValidate(t *testing.T) {
	mac, _ := net.ParseMAC("0a:58:0a:2a:00:05")
	good := PodPortSpec{Switch: "ovn-default", Name: "web.default", MAC: mac,
		IPs: []netip.Addr{netip.MustParseAddr("10.42.0.5")}, Owner: "default/web"}
	tests := []struct {
		name    string
		edit    func(*PodPortSpec)
		wantErr string
	}{
		{"ok", func(*PodPortSpec) {}, ""},
		{"dual stack", func(s *PodPortSpec) { s.IPs = append(s.IPs, netip.MustParseAddr("fd00::5")) }, ""},
		{"empty switch", func(s *PodPortSpec) { s.Switch = "" }, "empty logical switch name"},
		{"empty name", func(s *PodPortSpec) { s.Name = "" }, "empty pod port name"},
		{"space in name", func(s *PodPortSpec) { s.Name = "a b" }, "whitespace"},
		{"no mac", func(s *PodPortSpec) { s.MAC = nil }, "6-byte"},
		{"multicast mac", func(s *PodPortSpec) { s.MAC = net.HardwareAddr{1, 0, 0x5e, 0, 0, 1} }, "multicast"},
		{"no ips", func(s *PodPortSpec) { s.IPs = nil }, "no IP addresses"},
		{"zero ip", func(s *PodPortSpec) { s.IPs = []netip.Addr{{}} }, "unusable IP"},
		{"two v4", func(s *PodPortSpec) { s.IPs = append(s.IPs, netip.MustParseAddr("10.42.0.6")) }, "one family"},
		{"bad owner", func(s *PodPortSpec) { s.Owner = "web" }, "namespace/name"},
		{"statefulset", func(s *PodPortSpec) { s.StatefulSet = "web/0b7c-11" }, ""},
		{"statefulset without uid", func(s *PodPortSpec) { s.StatefulSet = "web" }, "name/uid"},
		{"statefulset with empty uid", func(s *PodPortSpec) { s.StatefulSet = "web/" }, "name/uid"},
	}
	for _, tt := range tests {
		s := good
		s.IPs = append([]netip.Addr(nil), good.IPs...)
		tt.edit(&s)
		err := s.Validate()
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, ovn.ErrInvalid) || !contains(err, tt.wantErr) {
			t.Errorf("%s: error %v, want ErrInvalid mentioning %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestParseAddresses(t *testing.T) {
	mac, ips, ok := parseAddresses("0a:58:0a:2a:00:05 10.42.0.5 fd00::5")
	if !ok || mac.String() != "0a:58:0a:2a:00:05" || len(ips) != 2 || ips[1] != netip.MustParseAddr("fd00::5") {
		t.Errorf("parseAddresses = %v %v %v", mac, ips, ok)
	}
	for _, bad := range []string{"router", "dynamic", "0a:58:0a:2a:00:05", "zz 10.0.0.1", "0a:58:0a:2a:00:05 nope"} {
		if _, _, ok := parseAddresses(bad); ok {
			t.Errorf("parseAddresses(%q) ok, want not ok", bad)
		}
	}
}

func contains(err error, s string) bool {
	return err != nil && len(s) > 0 && strings.Contains(err.Error(), s)
}

func TestCoalesceRefInserts(t *testing.T) {
	ops := []ovsdb.Operation{
		ovn.WaitPresent(nbdb.LogicalSwitchTable, "s1", "name", "a"),
		{Op: ovsdb.OperationInsert, Table: nbdb.LogicalSwitchPortTable, UUIDName: "p1"},
		ovn.MutateRefs(nbdb.LogicalSwitchTable, "s1", "ports", ovsdb.MutateOperationInsert, "p1"),
		{Op: ovsdb.OperationInsert, Table: nbdb.LogicalSwitchPortTable, UUIDName: "p2"},
		ovn.MutateRefs(nbdb.LogicalSwitchTable, "s2", "ports", ovsdb.MutateOperationInsert, "p2"),
		{Op: ovsdb.OperationInsert, Table: nbdb.LogicalSwitchPortTable, UUIDName: "p3"},
		ovn.MutateRefs(nbdb.LogicalSwitchTable, "s1", "ports", ovsdb.MutateOperationInsert, "p3"),
		ovn.MutateRefs(nbdb.LogicalSwitchTable, "s1", "ports", ovsdb.MutateOperationDelete, "old"),
	}
	got := coalesceRefInserts(ops)
	if len(got) != 7 {
		t.Fatalf("%d operations, want 7: %v", len(got), got)
	}
	for i, want := range []string{ovsdb.OperationWait, ovsdb.OperationInsert, ovsdb.OperationInsert,
		ovsdb.OperationInsert, ovsdb.OperationMutate} {
		if got[i].Op != want {
			t.Fatalf("op %d = %s, want %s (order of the rest must be kept)", i, got[i].Op, want)
		}
	}
	s1 := got[5].Mutations[0].Value.(ovsdb.OvsSet).GoSet
	if got[5].Where[0].Value.(ovsdb.UUID).GoUUID != "s1" || len(s1) != 2 ||
		s1[0].(ovsdb.UUID).GoUUID != "p1" || s1[1].(ovsdb.UUID).GoUUID != "p3" {
		t.Fatalf("merged s1 mutation = %+v", got[5])
	}
	if got[6].Where[0].Value.(ovsdb.UUID).GoUUID != "s2" {
		t.Fatalf("s2 mutation = %+v", got[6])
	}
	if ops[2].Mutations[0].Value.(ovsdb.OvsSet).GoSet[0].(ovsdb.UUID).GoUUID != "p1" || len(ops[2].Mutations[0].Value.(ovsdb.OvsSet).GoSet) != 1 {
		t.Fatal("input operations changed")
	}
}
