package plugin

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

func sampleAdd() *protocol.AddResult {
	return &protocol.AddResult{
		HostInterface: protocol.Interface{Name: "0123456789ab_h", MAC: "aa:bb:cc:dd:ee:01"},
		PodInterface:  protocol.Interface{Name: "eth0", MAC: "0a:58:0a:2a:00:05", Sandbox: "/var/run/netns/p"},
		IPs: []protocol.IPConfig{
			{Address: netip.MustParsePrefix("10.42.0.5/24"), Gateway: netip.MustParseAddr("10.42.0.1")},
			{Address: netip.MustParsePrefix("fd00:42::5/64"), Gateway: netip.MustParseAddr("fd00:42::1")},
		},
		Routes: []protocol.Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), GW: netip.MustParseAddr("10.42.0.1")}},
		MTU:    1400,
	}
}

func TestToResultConvertsToEveryVersion(t *testing.T) {
	res := toResult(sampleAdd())
	if len(res.Interfaces) != 2 || res.Interfaces[1].Sandbox == "" || *res.IPs[0].Interface != 1 {
		t.Fatalf("result = %+v", res)
	}
	if got := res.IPs[0].Address.String(); got != "10.42.0.5/24" {
		t.Errorf("address = %s", got)
	}
	for _, v := range Versions.SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			conv, err := res.GetAsVersion(v)
			if err != nil {
				t.Fatalf("convert to %s: %v", v, err)
			}
			b, err := json.Marshal(conv)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(b, &back); err != nil || back["cniVersion"] != v {
				t.Errorf("converted result %s: %v", b, err)
			}
		})
	}
}

func TestMergePrevKeepsEarlierPlugins(t *testing.T) {
	zero := 0
	prev := &types100.Result{
		CNIVersion: "1.0.0",
		Interfaces: []*types100.Interface{{Name: "lo-ish", Sandbox: "/x"}},
		IPs:        []*types100.IPConfig{{Interface: &zero, Address: *prefixToIPNet(netip.MustParsePrefix("192.0.2.1/32"))}},
		DNS:        types.DNS{Nameservers: []string{"10.43.0.10"}},
	}
	got, err := mergePrev(prev, toResult(sampleAdd()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Interfaces) != 3 || got.Interfaces[0].Name != "lo-ish" || len(got.IPs) != 3 {
		t.Fatalf("merged = %+v", got)
	}
	if *got.IPs[0].Interface != 0 || *got.IPs[1].Interface != 2 || *got.IPs[2].Interface != 2 {
		t.Errorf("interface indexes = %d %d %d, want 0 2 2", *got.IPs[0].Interface, *got.IPs[1].Interface, *got.IPs[2].Interface)
	}
	if len(got.DNS.Nameservers) != 1 {
		t.Errorf("DNS lost: %+v", got.DNS)
	}
}

func TestExpectedIPs(t *testing.T) {
	res := toResult(sampleAdd())
	ips, err := expectedIPs(res, "eth0")
	if err != nil {
		t.Fatal(err)
	}
	if len(ips) != 2 || ips[0] != netip.MustParsePrefix("10.42.0.5/24") {
		t.Errorf("expectedIPs = %v", ips)
	}
	if _, err := expectedIPs(res, "eth1"); cniCode(t, err) != types.ErrInvalidNetworkConfig {
		t.Errorf("expectedIPs for an unknown interface: %v", err)
	}
	if _, err := expectedIPs(nil, "eth0"); cniCode(t, err) != types.ErrInvalidNetworkConfig {
		t.Errorf("expectedIPs without prevResult: %v", err)
	}
}
