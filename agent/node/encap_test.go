package node

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestChooseEncapIP(t *testing.T) {
	a := netip.MustParseAddr
	host := []netip.Addr{a("127.0.0.1"), a("203.0.113.11"), a("203.0.113.111")}
	for _, tc := range []struct {
		name string
		src  encapSource
		want netip.Addr
		err  string // a part of the error; empty: none
	}{
		{"fixed wins", encapSource{Fixed: a("192.0.2.7"), From: encapFromDefaultRoute}, a("192.0.2.7"), ""},
		{"default route source", encapSource{From: encapFromDefaultRoute,
			Defaults: []defaultRoute{{Src: a("203.0.113.11"), Dev: "br-phy"}}}, a("203.0.113.11"), ""},
		{"lowest metric wins", encapSource{From: encapFromDefaultRoute, Defaults: []defaultRoute{
			{Src: a("203.0.113.11"), Dev: "a", Metric: 200}, {Src: a("203.0.113.111"), Dev: "b", Metric: 100}}}, a("203.0.113.111"), ""},
		{"no default route", encapSource{From: encapFromDefaultRoute}, netip.Addr{}, "no IPv4 default route"},
		{"loopback source refused", encapSource{From: encapFromDefaultRoute,
			Defaults: []defaultRoute{{Src: a("127.0.0.1"), Dev: "lo"}}}, netip.Addr{}, "127.0.0.1 (dev lo) is not one other hosts can reach"},
		{"route without source", encapSource{From: encapFromDefaultRoute,
			Defaults: []defaultRoute{{Dev: "eth9"}}}, netip.Addr{}, "via eth9 has no source address"},
		{"node ip", encapSource{From: encapFromNodeIP, NodeIP: a("203.0.113.111"), Local: host}, a("203.0.113.111"), ""},
		{"node ip ignores the default route", encapSource{From: encapFromNodeIP, NodeIP: a("203.0.113.111"), Local: host,
			Defaults: []defaultRoute{{Src: a("203.0.113.11")}}}, a("203.0.113.111"), ""},
		{"node ip unknown", encapSource{From: encapFromNodeIP, Local: host}, netip.Addr{}, "no IPv4 InternalIP"},
		{"node ip not local", encapSource{From: encapFromNodeIP, NodeIP: a("203.0.113.99"), Local: host}, netip.Addr{}, "203.0.113.99 is not an address of this host"},
		{"node ip loopback", encapSource{From: encapFromNodeIP, NodeIP: a("127.0.0.1"), Local: host}, netip.Addr{}, "127.0.0.1 is not an address other hosts can reach"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseEncapIP(tc.src)
			if tc.err == "" {
				if err != nil || got != tc.want {
					t.Fatalf("chooseEncapIP = %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			if !errors.Is(err, ErrNoEncapIP) || !strings.Contains(err.Error(), tc.err) || got.IsValid() {
				t.Fatalf("chooseEncapIP = %v, %v; want ErrNoEncapIP saying %q", got, err, tc.err)
			}
		})
	}
}
