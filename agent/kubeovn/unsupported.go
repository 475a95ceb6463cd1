package kubeovn

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
)

// implemented are the spec fields edgeovn acts on.
var implemented = map[string]bool{
	"default": true, "protocol": true, "namespaces": true, "cidrBlock": true, "gateway": true,
	"excludeIps": true, "gatewayType": true, "natOutgoing": true, "private": true, "allowSubnets": true,
	"vlan": true, "logicalGateway": true, "u2oInterconnection": true, "u2oInterconnectionIP": true, "vpc": true,
	// provider: "ovn" (or unset) for pods' primary networks, "<nad>.<namespace>.ovn" for
	// kube-ovn attachments, "<nad>.<namespace>" for other plugins with Kube-OVN as their IPAM.
	"provider": true,
	"acls":     true, "allowEWTraffic": true, "mtu": true, "disableGatewayCheck": true, "enableMulticastSnoop": true,
	"gatewayNode": true, "routeTable": true, "gatewayNodeSelectors": true, "enableEcmp": true,
}

// harmless are fields whose value is what edgeovn does anyway: Kube-OVN writes them on its own
// Subnets (the default VPC, the overlay provider, load balancers on), so they name nothing
// edgeovn leaves undone.
var harmless = map[string][]any{
	"enableLb": {true},
}

// Unsupported lists, sorted, the spec fields set in spec (the object's raw spec) that edgeovn
// does not implement: a field at its zero value ("", false, 0, empty list) asks for nothing
// and is not listed, nor is a harmless value; gatewayType other than distributed and
// centralized is, and
// enableLb: false (edgeovn's load balancers are on every subnet).
func Unsupported(spec map[string]any) []string {
	var out []string
	for k, v := range spec {
		switch {
		case k == "gatewayType":
			if gt, _ := v.(string); gt != "" && gt != GatewayDistributed && gt != GatewayCentralized {
				out = append(out, fmt.Sprintf("gatewayType: %s", gt))
			}
		case implemented[k]:
		case harmless[k] != nil:
			if !isZero(v) && !slices.Contains(harmless[k], v) || k == "enableLb" && v == false {
				out = append(out, k)
			}
		case isZero(v):
		default:
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func isZero(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		return rv.Len() == 0
	default:
		return rv.IsZero()
	}
}
