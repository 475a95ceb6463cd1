package node

import (
	"fmt"
	"net/netip"
	"testing"
)

// TestSubnetWiringCustomVpc: a custom VPC's subnet is neither routed through ovn0 nor
// masqueraded (its router has no join link, and its CIDR may overlap anything); a subnet that
// names the default VPC is wired as one that names none.
func TestSubnetWiringCustomVpc(t *testing.T) {
	tenant := subnetObj("tenant", "10.0.1.0/24", true, true)
	tenant.Object["spec"].(map[string]any)["vpc"] = "tenant1"
	named := subnetObj("named", "10.66.0.0/16", true, true)
	named.Object["spec"].(map[string]any)["vpc"] = "ovn-cluster"
	v := &subnetView{defaultNAT: true}
	v.refresh([]any{subnetObj("ovn-default", "10.42.0.0/16", true, true), tenant, named})
	routes, masq := v.wiring([]netip.Prefix{netip.MustParsePrefix("10.42.0.0/16")}, true, false)
	if got, want := fmt.Sprint(routes, masq), "[10.42.0.0/16 10.66.0.0/16] [10.42.0.0/16 10.66.0.0/16]"; got != want {
		t.Errorf("routes and masquerade %s, want %s", got, want)
	}
}
