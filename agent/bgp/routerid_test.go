package bgp

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/agent/config"
)

// TestRouterID: with no IPv4 neighbour (an IPv6-only site) the router ID is the host's own
// IPv4 address unless one is set; without either, the error says to set router-id.
func TestRouterID(t *testing.T) {
	v6 := config.BGP{NeighborIPv6Addresses: addrs("2001:db8::1")}
	host := func(a string, err error) func(context.Context) (netip.Addr, error) {
		return func(context.Context) (netip.Addr, error) {
			if err != nil {
				return netip.Addr{}, err
			}
			return netip.MustParseAddr(a), nil
		}
	}
	set := v6
	set.RouterID = netip.MustParseAddr("192.0.2.9")
	for _, c := range []struct {
		name    string
		b       config.BGP
		host    func(context.Context) (netip.Addr, error)
		want    string
		wantErr string
	}{
		{name: "set wins", b: set, host: host("198.51.100.11", nil), want: "192.0.2.9"},
		{name: "host IPv4", b: v6, host: host("198.51.100.11", nil), want: "198.51.100.11"},
		{name: "host IPv6 only", b: v6, host: host("2001:db8::11", nil), wantErr: "host address 2001:db8::11 is not IPv4"},
		{name: "host unknown", b: v6, host: host("", errors.New("no encap ip")), wantErr: "no encap ip: set router-id"},
		{name: "no host", b: v6, wantErr: "no host IPv4 address known: set router-id"},
	} {
		got, err := routerID(context.Background(), c.b, c.host)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: got %v, %v; want error with %q", c.name, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("%s: got %v, %v; want %s", c.name, got, err, c.want)
		}
	}
}
