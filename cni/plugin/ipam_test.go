package plugin

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// TestLoadNetConfIPAM: another plugin's config with "ipam": {"type": "kube-ovn"} is an IPAM
// call with the ipam section's provider and socket; the plugin's own config is not; a bad
// ipam section is refused naming the field.
func TestLoadNetConfIPAM(t *testing.T) {
	tests := []struct {
		name, conf             string
		ipam                   bool
		provider, socket, errs string
		code                   uint
	}{
		{name: "macvlan", conf: `{"cniVersion":"0.3.1","type":"macvlan","master":"eth0","ipam":{"type":"kube-ovn","provider":"mv.default","server_socket":"/run/openvswitch/kube-ovn-daemon.sock"}}`,
			ipam: true, provider: "mv.default", socket: protocol.DefaultSocket},
		{name: "socket", conf: `{"type":"ipvlan","ipam":{"type":"edgeovn","provider":"iv.ns","serverSocket":"/tmp/s.sock"}}`,
			ipam: true, provider: "iv.ns", socket: "/tmp/s.sock"},
		{name: "kube-ovn plugin", conf: `{"type":"kube-ovn","provider":"a.default.ovn","ipam":{"type":"kube-ovn"}}`, provider: "a.default.ovn", socket: protocol.DefaultSocket},
		{name: "other ipam", conf: `{"type":"macvlan","ipam":{"type":"host-local"}}`, socket: protocol.DefaultSocket},
		{name: "no provider", conf: `{"type":"macvlan","ipam":{"type":"kube-ovn"}}`, code: types.ErrInvalidNetworkConfig, errs: "ipam.provider is required"},
		{name: "ovn provider", conf: `{"type":"macvlan","ipam":{"type":"kube-ovn","provider":"a.b.ovn"}}`, code: types.ErrInvalidNetworkConfig, errs: `ipam.provider "a.b.ovn" names an OVN network`},
		{name: "malformed", conf: `{"type":"macvlan","ipam":{"type":"kube-ovn","provider":["x"]}}`, code: types.ErrDecodingFailure, errs: "field ipam.provider is a JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conf, err := LoadNetConf([]byte(tt.conf))
			if tt.code != 0 {
				if got := cniCode(t, err); got != tt.code || !strings.Contains(err.Error(), tt.errs) {
					t.Fatalf("error %v (code %d), want code %d naming %q", err, got, tt.code, tt.errs)
				}
				if !ipamCall([]byte(tt.conf)) {
					t.Errorf("ipamCall = false: its DEL would fail")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if conf.ipamOnly != tt.ipam || conf.Provider != tt.provider || conf.ServerSocket != tt.socket {
				t.Errorf("ipam %v provider %q socket %q, want %v %q %q", conf.ipamOnly, conf.Provider, conf.ServerSocket, tt.ipam, tt.provider, tt.socket)
			}
			if ipamCall([]byte(tt.conf)) != tt.ipam {
				t.Errorf("ipamCall = %v, want %v", !tt.ipam, tt.ipam)
			}
		})
	}
}

// TestIPAMResult: an IPAM result carries addresses on no interface, with the gateway, and the
// routes.
func TestIPAMResult(t *testing.T) {
	res := toIPAMResult(&protocol.AddResult{
		IPs:    []protocol.IPConfig{{Address: netip.MustParsePrefix("172.19.0.101/24"), Gateway: netip.MustParseAddr("172.19.0.1")}},
		Routes: []protocol.Route{{Dst: netip.MustParsePrefix("10.0.0.0/8"), GW: netip.MustParseAddr("172.19.0.254")}},
	})
	if len(res.Interfaces) != 0 || len(res.IPs) != 1 || res.IPs[0].Interface != nil ||
		res.IPs[0].Address.String() != "172.19.0.101/24" || res.IPs[0].Gateway.String() != "172.19.0.1" {
		t.Errorf("result %+v", res)
	}
	if len(res.Routes) != 1 || res.Routes[0].Dst.String() != "10.0.0.0/8" {
		t.Errorf("routes %+v", res.Routes)
	}
}
