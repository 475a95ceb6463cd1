package hostnet

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func mustMAC(s string) net.HardwareAddr {
	mac, err := net.ParseMAC(s)
	if err != nil {
		panic(err)
	}
	return mac
}

func testSpec() Spec {
	return Spec{
		Bridge:     "br-int",
		Interface:  "ovn0",
		IfaceID:    "node-node1",
		MAC:        mustMAC("0a:58:64:40:00:02"),
		Address:    netip.MustParsePrefix("100.64.0.2/16"),
		Gateway:    netip.MustParseAddr("100.64.0.1"),
		Routes:     []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")},
		MTU:        1400,
		Masquerade: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")},
	}
}

func TestValidate(t *testing.T) {
	if err := testSpec().Validate(); err != nil {
		t.Fatalf("good spec: %v", err)
	}
	cases := []struct {
		name  string
		field string // the error must name it
		edit  func(*Spec)
	}{
		{"empty bridge", "bridge", func(s *Spec) { s.Bridge = "" }},
		{"empty interface", "interface", func(s *Spec) { s.Interface = "" }},
		{"long interface", "interface", func(s *Spec) { s.Interface = "ovn0123456789abc" }},
		{"interface with slash", "interface", func(s *Spec) { s.Interface = "ovn/0" }},
		{"empty iface-id", "iface-id", func(s *Spec) { s.IfaceID = "" }},
		{"iface-id with space", "iface-id", func(s *Spec) { s.IfaceID = "node 1" }},
		{"no mac", "mac", func(s *Spec) { s.MAC = nil }},
		{"multicast mac", "mac", func(s *Spec) { s.MAC = mustMAC("01:00:5e:00:00:01") }},
		{"zero mac", "mac", func(s *Spec) { s.MAC = mustMAC("00:00:00:00:00:00") }},
		{"no address", "address", func(s *Spec) { s.Address = netip.Prefix{} }},
		{"ipv6 address", "address", func(s *Spec) { s.Address = netip.MustParsePrefix("fd00::2/64") }},
		{"mapped address", "address", func(s *Spec) { s.Address = netip.MustParsePrefix("::ffff:100.64.0.2/112") }},
		{"network address", "address", func(s *Spec) { s.Address = netip.MustParsePrefix("100.64.0.0/16") }},
		{"no gateway", "gateway", func(s *Spec) { s.Gateway = netip.Addr{} }},
		{"gateway outside", "gateway", func(s *Spec) { s.Gateway = netip.MustParseAddr("100.65.0.1") }},
		{"gateway is address", "gateway", func(s *Spec) { s.Gateway = s.Address.Addr() }},
		{"ipv6 gateway", "gateway", func(s *Spec) { s.Gateway = netip.MustParseAddr("fd00::1") }},
		{"negative mtu", "mtu", func(s *Spec) { s.MTU = -1 }},
		{"tiny mtu", "mtu", func(s *Spec) { s.MTU = 60 }},
		{"invalid route", "routes", func(s *Spec) { s.Routes = append(s.Routes, netip.Prefix{}) }},
		{"route with host bits", "routes", func(s *Spec) { s.Routes = []netip.Prefix{netip.MustParsePrefix("10.42.0.1/16")} }},
		{"ipv6 route", "routes", func(s *Spec) { s.Routes = []netip.Prefix{netip.MustParsePrefix("fd00:42::/64")} }},
		{"default route", "routes", func(s *Spec) { s.Routes = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")} }},
		{"invalid masquerade", "masquerade", func(s *Spec) { s.Masquerade = []netip.Prefix{{}} }},
		{"masquerade with host bits", "masquerade", func(s *Spec) {
			s.Masquerade = []netip.Prefix{netip.MustParsePrefix("10.42.7.1/16")}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec()
			tc.edit(&s)
			err := s.Validate()
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

func TestValidateAllowsOptionalFields(t *testing.T) {
	s := testSpec()
	s.MTU, s.Routes, s.Masquerade = 0, nil, nil
	if err := s.Validate(); err != nil {
		t.Errorf("spec without mtu, routes and masquerade: %v", err)
	}
}
