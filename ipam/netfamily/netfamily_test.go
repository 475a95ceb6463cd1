package netfamily

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestNetwork(t *testing.T) {
	tests := []struct {
		cidrs, gws string
		want       string // sorted CIDRs, gateways, protocol; or the error's text
	}{
		{"10.16.0.0/16", "", "[10.16.0.0/16] [10.16.0.1] IPv4"},
		{"fd00:10:16::/64", "fd00:10:16::fe", "[fd00:10:16::/64] [fd00:10:16::fe] IPv6"},
		{"10.16.0.0/16,fd00:10:16::/64", "10.16.0.1,fd00:10:16::1", "[10.16.0.0/16 fd00:10:16::/64] [10.16.0.1 fd00:10:16::1] Dual"},
		{"fd00:10:16::/64, 10.16.0.5/16", "fd00:10:16::1, 10.16.0.1", "[10.16.0.0/16 fd00:10:16::/64] [10.16.0.1 fd00:10:16::1] Dual"},
		{"10.16.0.0/31", "10.16.0.0", "[10.16.0.0/31] [10.16.0.0] IPv4"},
		{"", "", "cidrs is empty"},
		{"10.16.0.0/16,fd00::/64,fd01::/64", "", "at most one CIDR per family"},
		{"fd00::/64,fd01::/64", "", "two CIDRs of one family"},
		{"fe80::%eth0/64", "", "cidrs"},
		{"10.16.0.0/16,fd00::/64", "10.16.0.1,10.16.0.2", "gws \"10.16.0.1,10.16.0.2\": entry 2, 10.16.0.2, is IPv4 but CIDR 2, fd00::/64, is IPv6"},
		{"10.16.0.0/16,fd00::/64", "fd00::1,10.16.0.1", "entry 1, fd00::1, is IPv6 but CIDR 1, 10.16.0.0/16, is IPv4"},
		{"10.16.0.0/16,fd00::/64", "10.16.0.1", "want one address per CIDR"},
		{"10.16.0.0/16", "10.17.0.1", "gws 10.17.0.1 is outside cidrs 10.16.0.0/16"},
		{"fd00::/64", "fd00::", "gws fd00:: is the network address of fd00::/64"},
		{"10.16.0.0/16", "10.16.0.x", `gws "10.16.0.x"`},
	}
	for _, tt := range tests {
		got := func() string {
			written, err := Prefixes("cidrs", tt.cidrs)
			if err != nil {
				return check(t, err)
			}
			gws, err := Gateways("gws", tt.gws, "cidrs", written)
			if err != nil {
				return check(t, err)
			}
			c, g := Sort(written, gws)
			return fmt.Sprint(c, g, " ", Protocol(c))
		}()
		if !strings.Contains(strings.ReplaceAll(got, "  ", " "), tt.want) {
			t.Errorf("%q %q: got %q, want %q", tt.cidrs, tt.gws, got, tt.want)
		}
	}
}

func check(t *testing.T, err error) string {
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("%v is not ErrInvalid", err)
	}
	return err.Error()
}

func TestFamilies(t *testing.T) {
	ps := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/64")}
	if got := Families(ps); got != "IPv4,IPv6" {
		t.Errorf("Families = %s", got)
	}
}
