package node

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/agent/config"
)

// TestHostSpecFamilies: ovn0's spec takes each family's join address and gateway from the
// Node's annotations as Kube-OVN writes them ("a,b"), routes the cluster prefixes of the
// families it has a join address of, and each family's Service CIDR only with a join address of
// that family.
func TestHostSpecFamilies(t *testing.T) {
	p := netip.MustParsePrefix
	tests := []struct {
		name, ips, cidrs, gws string
		clusters              []netip.Prefix
		want                  string // address gateway address6 gateway6 routes masquerade
	}{
		{"dual stack", "100.64.0.2,fd00:100:64::2", "100.64.0.0/16,fd00:100:64::/112", "100.64.0.1,fd00:100:64::1",
			[]netip.Prefix{p("10.42.0.0/16"), p("2001:cafe:42::/56")},
			"100.64.0.2/16 100.64.0.1 fd00:100:64::2/112 fd00:100:64::1 [10.42.0.0/16 2001:cafe:42::/56 10.43.0.0/16 2001:cafe:43::/112] [10.42.0.0/16 2001:cafe:42::/56]"},
		{"ipv6 only", "fd00:100:64::2", "fd00:100:64::/112", "fd00:100:64::1", []netip.Prefix{p("2001:cafe:42::/56")},
			"invalid Prefix invalid IP fd00:100:64::2/112 fd00:100:64::1 [2001:cafe:42::/56 2001:cafe:43::/112] [2001:cafe:42::/56]"},
		{"ipv4 join, dual cluster: ipv6 masqueraded, not routed", "100.64.0.2", "100.64.0.0/16", "100.64.0.1",
			[]netip.Prefix{p("10.42.0.0/16"), p("2001:cafe:42::/56")},
			"100.64.0.2/16 100.64.0.1 invalid Prefix invalid IP [10.42.0.0/16 10.43.0.0/16] [10.42.0.0/16 2001:cafe:42::/56]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Role{req: Request{Cluster: config.Cluster{ClusterCIDR: tt.clusters[0], Services: true,
				ServiceCIDRs: []netip.Prefix{p("10.43.0.0/16"), p("2001:cafe:43::/112")}}}}
			if len(tt.clusters) == 2 {
				r.req.ClusterCIDRDual = tt.clusters[1]
			}
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{
				annotation.IPAddress: tt.ips, annotation.CIDR: tt.cidrs, annotation.Gateway: tt.gws,
				annotation.MACAddress: "0a:58:64:40:00:02", annotation.LogicalSwitch: "join",
				annotation.Allocated: "true", annotation.Routed: "true", annotation.PortNameKey: "node-n1"}}}
			spec, _, err := r.hostSpec(node, &subnetView{defaultNAT: true}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := spec.Validate(); err != nil {
				t.Fatalf("spec invalid: %v", err)
			}
			got := fmt.Sprint(spec.Address, " ", spec.Gateway, " ", spec.Address6, " ", spec.Gateway6, " ", spec.Routes, " ", spec.Masquerade)
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	r := &Role{req: Request{Cluster: config.Cluster{ClusterCIDR: p("10.42.0.0/16")}}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{
		annotation.IPAddress: "100.64.0.2", annotation.CIDR: "100.64.0.0/16", annotation.Gateway: "fd00::1",
		annotation.MACAddress: "0a:58:64:40:00:02", annotation.LogicalSwitch: "join",
		annotation.Allocated: "true", annotation.Routed: "true", annotation.PortNameKey: "node-n1"}}}
	if _, _, err := r.hostSpec(node, &subnetView{defaultNAT: true}, nil); err == nil || !strings.Contains(err.Error(), "want a join address and its family's gateway") {
		t.Errorf("join address without a gateway of its family: %v", err)
	}
}
