package kubeovn

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseNetwork(t *testing.T) {
	tests := []struct {
		name string
		spec SubnetSpec
		want string // CIDRs gateways excludes, or the error's text
	}{
		{"kube-ovn's subnet1 example", SubnetSpec{Protocol: "IPv4", CIDRBlock: "10.66.0.0/16", Gateway: "10.66.0.1",
			ExcludeIps: []string{"10.66.0.1..10.66.0.10", "10.66.0.101..10.66.0.151"}},
			"[10.66.0.0/16] [10.66.0.1] [10.66.0.1..10.66.0.10 10.66.0.101..10.66.0.151]"},
		{"gateway defaults to the first address", SubnetSpec{CIDRBlock: "10.69.0.0/16"}, "[10.69.0.0/16] [10.69.0.1] []"},
		{"dual stack as kube-ovn writes it", SubnetSpec{Protocol: "Dual", CIDRBlock: "10.16.0.0/16,fd00:10:16::/64",
			Gateway: "10.16.0.1,fd00:10:16::1"}, "[10.16.0.0/16 fd00:10:16::/64] [10.16.0.1 fd00:10:16::1] []"},
		{"dual stack, IPv6 first", SubnetSpec{CIDRBlock: "fd00:10:16::/64, 10.16.0.0/16"}, "[10.16.0.0/16 fd00:10:16::/64] [10.16.0.1 fd00:10:16::1] []"},
		{"host bits masked", SubnetSpec{CIDRBlock: "10.1.1.1/24"}, "[10.1.1.0/24] [10.1.1.1] []"},
		{"empty cidrBlock", SubnetSpec{}, "cidrBlock is empty"},
		{"bad cidr", SubnetSpec{CIDRBlock: "10.66.0.0/33"}, `cidrBlock "10.66.0.0/33"`},
		{"two v4", SubnetSpec{CIDRBlock: "10.1.0.0/16,10.2.0.0/16"}, "two CIDRs of one family"},
		{"gateway outside", SubnetSpec{CIDRBlock: "10.66.0.0/16", Gateway: "10.67.0.1"}, "gateway 10.67.0.1 is outside cidrBlock"},
		{"gateway the network address", SubnetSpec{CIDRBlock: "10.66.0.0/16", Gateway: "10.66.0.0"}, "is the network address"},
		{"one gateway for two families", SubnetSpec{CIDRBlock: "10.16.0.0/16,fd00::/64", Gateway: "10.16.0.1"}, "one address per CIDR"},
		{"second IPv4 gateway, no IPv6 one", SubnetSpec{CIDRBlock: "10.16.0.0/16,fd00:10:16::/64", Gateway: "10.16.0.1,10.16.0.2"},
			`gateway "10.16.0.1,10.16.0.2": entry 2, 10.16.0.2, is IPv4 but CIDR 2, fd00:10:16::/64, is IPv6`},
		{"gateways in the wrong order", SubnetSpec{CIDRBlock: "10.16.0.0/16,fd00:10:16::/64", Gateway: "fd00:10:16::1,10.16.0.1"},
			`gateway "fd00:10:16::1,10.16.0.1": entry 1, fd00:10:16::1, is IPv6 but CIDR 1, 10.16.0.0/16, is IPv4`},
		{"ipv6 first, gateways in its order", SubnetSpec{CIDRBlock: "fd00:10:16::/64,10.16.0.0/16", Gateway: "fd00:10:16::fe,10.16.0.254"},
			"[10.16.0.0/16 fd00:10:16::/64] [10.16.0.254 fd00:10:16::fe] []"},
		{"two gateways for one family", SubnetSpec{CIDRBlock: "10.16.0.0/16", Gateway: "10.16.0.1,10.16.0.2"}, "one address per CIDR"},
		{"ipv6 gateway for an ipv4 subnet", SubnetSpec{CIDRBlock: "10.16.0.0/16", Gateway: "fd00::1"}, "is IPv6 but CIDR 1, 10.16.0.0/16, is IPv4"},
		{"protocol Dual for one family", SubnetSpec{Protocol: "Dual", CIDRBlock: "fd00:10:16::/64"}, "protocol Dual does not match cidrBlock (IPv6)"},
		{"protocol mismatch", SubnetSpec{Protocol: "IPv6", CIDRBlock: "10.66.0.0/16"}, "protocol IPv6 does not match cidrBlock (IPv4)"},
		{"exclude outside", SubnetSpec{CIDRBlock: "10.66.0.0/16", ExcludeIps: []string{"10.67.0.1"}}, `excludeIps "10.67.0.1" is outside`},
		{"exclude reversed", SubnetSpec{CIDRBlock: "10.66.0.0/16", ExcludeIps: []string{"10.66.0.9..10.66.0.1"}}, "ends before it starts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := ParseNetwork(tt.spec)
			got := ""
			if err != nil {
				if !errors.Is(err, ErrInvalidSpec) {
					t.Errorf("error %v is not ErrInvalidSpec", err)
				}
				got = err.Error()
			} else {
				got = fmt.Sprint(n.CIDRs, n.Gateways, n.Excludes)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestProtocolDerived: Kube-OVN's protocol comes from cidrBlock when the spec leaves it out.
func TestProtocolDerived(t *testing.T) {
	for block, want := range map[string]string{"10.16.0.0/16": "IPv4", "fd00:10:16::/64": "IPv6", "fd00:10:16::/64,10.16.0.0/16": "Dual"} {
		n, err := ParseNetwork(SubnetSpec{CIDRBlock: block})
		if err != nil || n.Protocol != want {
			t.Errorf("cidrBlock %s: protocol %q, %v; want %s", block, n.Protocol, err, want)
		}
	}
}

func TestUnsupported(t *testing.T) {
	spec := map[string]any{
		"cidrBlock": "10.10.0.0/24", "namespaces": []any{"ns1"}, "natOutgoing": true, "default": false,
		"gatewayNode": "", "routeTable": "", "vpc": "ovn-cluster", "provider": "ovn", "enableLb": true, // what Kube-OVN writes
		"acls": []any{map[string]any{"action": "drop"}}, "allowEWTraffic": false, "mtu": int64(1300),
		"gatewayType": "centralized", "futureField": "x", "vips": []any{},
		"private": true, "allowSubnets": []any{"10.16.0.0/16"}, // implemented
	}
	got := fmt.Sprint(Unsupported(spec))
	if want := "[futureField]"; got != want {
		t.Errorf("Unsupported = %s, want %s", got, want)
	}
	if got := Unsupported(map[string]any{"cidrBlock": "10.66.0.0/16", "gatewayType": "distributed", "enableLb": false}); fmt.Sprint(got) != "[enableLb]" {
		t.Errorf("Unsupported = %v, want [enableLb]", got)
	}
}

func TestParseAllowSubnets(t *testing.T) {
	got, err := ParseAllowSubnets(SubnetSpec{AllowSubnets: []string{"10.16.0.0/16", " 10.18.0.5/16", "fd00:10:16::/64"}})
	if err != nil || fmt.Sprint(got) != "[10.16.0.0/16 10.18.0.0/16 fd00:10:16::/64]" {
		t.Errorf("ParseAllowSubnets = %v, %v", got, err)
	}
	for _, bad := range []string{"10.18.0/16", "10.1.1.302/24", "10.16.0.1", "", "any"} {
		_, err := ParseAllowSubnets(SubnetSpec{Private: true, AllowSubnets: []string{"10.16.0.0/16", bad}})
		if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), fmt.Sprintf("allowSubnets entry %q is not a CIDR", bad)) {
			t.Errorf("allowSubnets %q: %v, want ErrInvalidSpec naming the entry", bad, err)
		}
	}
}

func TestSubnetCRD(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	crd := crds[0]
	if crd.GetName() != SubnetCRDName || crd.GetKind() != "CustomResourceDefinition" {
		t.Fatalf("crd %s %s", crd.GetKind(), crd.GetName())
	}
}
