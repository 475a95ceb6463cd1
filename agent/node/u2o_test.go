package node

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/cni/server"
)

func underlayObj(name, cidr string, u2o, logicalGateway bool, u2oIP string) any {
	u := subnetObj(name, cidr, false, true)
	spec := u.Object["spec"].(map[string]any)
	spec["vlan"], spec["u2oInterconnection"], spec["logicalGateway"] = "v100", u2o, logicalGateway
	u.Object["status"].(map[string]any)["u2oInterconnectionIP"] = u2oIP
	return u
}

// TestU2OWiring: an underlay subnet is routed through ovn0 only with u2oInterconnection and
// its address in the status, and its pods' default gateway is then the u2o address; without
// it (or with logicalGateway) the pod keeps spec.gateway; with it but no address yet, the ADD
// fails naming the subnet.
func TestU2OWiring(t *testing.T) {
	v := &subnetView{defaultNAT: true}
	v.refresh([]any{
		underlayObj("plain", "192.0.2.0/24", false, false, ""),
		underlayObj("u2o", "198.51.100.0/24", true, false, "198.51.100.11"),
		underlayObj("lgw", "203.0.113.0/24", true, true, ""),
		underlayObj("pending", "192.0.3.0/24", true, false, ""),
	})
	routes, _ := v.wiring(nil, true, false)
	if !slices.Contains(routes, netip.MustParsePrefix("198.51.100.0/24")) || len(routes) != 1 {
		t.Errorf("routes %v: want only the u2o subnet's 198.51.100.0/24", routes)
	}
	pn := func(sw, gw string) server.PodNetwork {
		return server.PodNetwork{Switch: sw, Gateways: []netip.Addr{netip.MustParseAddr(gw)}}
	}
	for _, c := range []struct {
		in      server.PodNetwork
		want    string
		wantErr string
	}{
		{pn("plain", "192.0.2.1"), "192.0.2.1", ""},
		{pn("u2o", "198.51.100.1"), "198.51.100.11", ""},
		{pn("lgw", "203.0.113.1"), "203.0.113.1", ""},
		{pn("pending", "192.0.3.1"), "", "subnet pending has u2oInterconnection but no status.u2oInterconnectionIP"},
		{pn("ovn-default", "10.42.0.1"), "10.42.0.1", ""},
	} {
		got, err := withU2OGateway(c.in, v)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.in.Switch, err, c.wantErr)
			}
			continue
		}
		if err != nil || got.Gateways[0].String() != c.want {
			t.Errorf("%s: gateway %v %v, want %s", c.in.Switch, got.Gateways, err, c.want)
		}
	}
	if got, err := withU2OGateway(pn("u2o", "198.51.100.1"), nil); err != nil || got.Gateways[0].String() != "198.51.100.1" {
		t.Errorf("before the Subnets are watched: %v %v, want the annotated gateway", got.Gateways, err)
	}
}
