package annotation

import (
	"errors"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	mac, _ := net.ParseMAC("0a:58:0a:2a:00:05")
	cases := map[string]Network{
		"ipv4": {Switch: "ovn-default", IPs: []netip.Addr{netip.MustParseAddr("10.42.0.5")}, MAC: mac,
			CIDRs: []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}, Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1")}},
		"dual stack": {Switch: "s1", IPs: []netip.Addr{netip.MustParseAddr("10.42.0.5"), netip.MustParseAddr("fd00::5")}, MAC: mac,
			CIDRs:    []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16"), netip.MustParsePrefix("fd00::/112")},
			Gateways: []netip.Addr{netip.MustParseAddr("10.42.0.1"), netip.MustParseAddr("fd00::1")}},
	}
	for name, n := range cases {
		t.Run(name, func(t *testing.T) {
			a := Encode(n)
			if a[Allocated] != "true" || a[Routed] != "true" {
				t.Fatalf("Encode: allocated/routed not set: %v", a)
			}
			got, err := Decode(a)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, n) {
				t.Fatalf("round trip: got %+v want %+v", got, n)
			}
			if len(got.Prefixes()) != len(n.IPs) || got.Prefixes()[0].Bits() != n.CIDRs[0].Bits() {
				t.Fatalf("Prefixes: %v", got.Prefixes())
			}
		})
	}
	if strings.Count(Encode(cases["dual stack"])[IPAddress], ",") != 1 {
		t.Fatalf("dual-stack addresses must be comma-joined on the wire (Kube-OVN format)")
	}
}

func TestDecodeErrors(t *testing.T) {
	good := map[string]string{Allocated: "true", Routed: "true", LogicalSwitch: "ovn-default",
		IPAddress: "10.42.0.5", CIDR: "10.42.0.0/16", Gateway: "10.42.0.1", MACAddress: "0a:58:0a:2a:00:05"}
	cases := []struct {
		name, key, value, want string
	}{
		{"not allocated", Allocated, "", "not allocated"},
		{"not routed", Routed, "false", "not allocated"},
		{"bad ip", IPAddress, "10.42.0.300", IPAddress},
		{"bad mac", MACAddress, "zz", MACAddress},
		{"bad cidr", CIDR, "10.42.0.0", CIDR},
		{"ip outside cidr", IPAddress, "10.43.0.5", "outside"},
		{"no switch", LogicalSwitch, "", LogicalSwitch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := map[string]string{}
			for k, v := range good {
				a[k] = v
			}
			a[c.key] = c.value
			_, err := Decode(a)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode: err %v, want mention of %q", err, c.want)
			}
		})
	}
	if _, err := Decode(map[string]string{}); !errors.Is(err, ErrNotAllocated) {
		t.Fatalf("empty annotations: %v, want ErrNotAllocated", err)
	}
}

func TestRequested(t *testing.T) {
	r, err := Requested(map[string]string{IPAddress: "10.42.0.9", MACAddress: "0a:00:00:00:00:09", LogicalSwitch: "s1"})
	if err != nil || r.Switch != "s1" || r.IPs[0] != netip.MustParseAddr("10.42.0.9") || r.MAC.String() != "0a:00:00:00:00:09" {
		t.Fatalf("Requested = %+v, %v", r, err)
	}
	if r, err := Requested(nil); err != nil || len(r.IPs) != 0 || r.MAC != nil {
		t.Fatalf("no pins: %+v, %v", r, err)
	}
	if _, err := Requested(map[string]string{IPAddress: "nope"}); err == nil || !strings.Contains(err.Error(), IPAddress) {
		t.Fatalf("bad pinned ip: %v", err)
	}
}

func TestNodeInternalIP(t *testing.T) {
	node := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "h1"},
		{Type: corev1.NodeInternalIP, Address: "fd00::5"},
		{Type: corev1.NodeExternalIP, Address: "198.51.100.7"},
		{Type: corev1.NodeInternalIP, Address: "not-an-ip"},
		{Type: corev1.NodeInternalIP, Address: "192.0.2.10"},
	}}}
	if got := NodeInternalIP(node); got != netip.MustParseAddr("192.0.2.10") {
		t.Errorf("NodeInternalIP = %v, want the first IPv4 InternalIP 192.0.2.10", got)
	}
	if got := NodeInternalIP(&corev1.Node{}); got.IsValid() {
		t.Errorf("no addresses: %v, want none", got)
	}
}
