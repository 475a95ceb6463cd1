package subnetcheck

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	p := netip.MustParsePrefix
	reserved := append(append(append(Prefixes("Service CIDR", p("10.43.0.0/16")),
		Addrs("InternalIP of node n1", netip.MustParseAddr("198.51.100.7"))...),
		Prefixes("host network of node n1", p("192.0.2.10/24"), p("fd00:1::/64"))...),
		Prefixes("subnet join", p("100.64.0.0/16"))...)
	tests := []struct {
		cidrs []string
		want  string // "" accepted; else both sides of the refusal
	}{
		{[]string{"10.66.0.0/16"}, ""},
		{[]string{"10.66.0.0/16", "fd00:66::/64"}, ""},
		{[]string{"192.0.2.0/24"}, "cidr 192.0.2.0/24 overlaps host network of node n1 192.0.2.0/24"},
		{[]string{"192.0.2.128/25"}, "cidr 192.0.2.128/25 overlaps host network of node n1 192.0.2.0/24"},
		{[]string{"192.0.0.0/16"}, "cidr 192.0.0.0/16 overlaps host network of node n1 192.0.2.0/24"},
		{[]string{"10.66.0.0/16", "fd00:1::/80"}, "cidr fd00:1::/80 overlaps host network of node n1 fd00:1::/64"},
		{[]string{"10.43.0.0/24"}, "cidr 10.43.0.0/24 overlaps Service CIDR 10.43.0.0/16"},
		{[]string{"10.0.0.0/8"}, "cidr 10.0.0.0/8 overlaps Service CIDR 10.43.0.0/16"},
		{[]string{"198.51.100.0/24"}, "cidr 198.51.100.0/24 overlaps InternalIP of node n1 198.51.100.7/32"},
		{[]string{"100.64.1.0/24"}, "cidr 100.64.1.0/24 overlaps subnet join 100.64.0.0/16"},
		{[]string{"0.0.0.0/1"}, "cidr 0.0.0.0/1 overlaps the unspecified / \"this network\" range 0.0.0.0/8"},
		{[]string{"0.0.0.0/0"}, "overlaps the unspecified"},
		{[]string{"127.1.0.0/16"}, "cidr 127.1.0.0/16 overlaps the loopback range 127.0.0.0/8"},
		{[]string{"169.254.0.0/24"}, "overlaps the link-local range 169.254.0.0/16"},
		{[]string{"239.1.0.0/16"}, "overlaps the multicast range 224.0.0.0/4"},
		{[]string{"250.0.0.0/8"}, "overlaps the reserved range (and broadcast) 240.0.0.0/4"},
		{[]string{"::1/128"}, "overlaps the loopback address ::1/128"},
		{[]string{"::/0"}, "overlaps the unspecified address ::/128"},
		{[]string{"fe80::/64"}, "overlaps the link-local range fe80::/10"},
		{[]string{"ff02::/16"}, "overlaps the multicast range ff00::/8"},
	}
	for _, tt := range tests {
		var cidrs []netip.Prefix
		for _, c := range tt.cidrs {
			cidrs = append(cidrs, p(c))
		}
		err := Check(cidrs, reserved)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: refused: %v", tt.cidrs, err)
		case tt.want != "" && (err == nil || !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%v: got %v, want a refusal saying %q", tt.cidrs, err, tt.want)
		}
	}
}

func TestCheckSkipsInvalid(t *testing.T) {
	if err := Check([]netip.Prefix{netip.MustParsePrefix("10.66.0.0/16")}, []Reserved{{What: "nothing"}}); err != nil {
		t.Fatal(err)
	}
}
