package ovn

// External-ID keys and values that mark a row as edgeovn's. Only rows that carry
// VendorKey=Vendor are ever changed or garbage-collected by edgeovn.
const (
	VendorKey    = "vendor"
	Vendor       = "edgeovn"
	OwnerKindKey = "owner-kind"
	OwnerKey     = "owner"
)

// Owner kinds used across edgeovn.
const (
	KindCluster = "Cluster"
	KindSubnet  = "Subnet"
	KindPod     = "Pod"
	KindNode    = "Node"
	// KindService owns a Service's load balancers ("namespace/name").
	KindService = "Service"
	// KindNetworkPolicy owns a policy's port group, address sets and ACLs ("namespace/name").
	KindNetworkPolicy = "NetworkPolicy"
	// KindNamespace owns rows shared by a namespace's policies ("name").
	KindNamespace = "Namespace"
	// KindVpc owns a custom VPC's router, its static routes and policies ("name").
	KindVpc = "Vpc"
	// KindSecurityGroup owns a SecurityGroup's port group, address sets and ACLs ("name").
	KindSecurityGroup = "SecurityGroup"
	// KindVpcExternal owns a Vpc's link to the external network: its router port
	// "<vpc>-external" with the gateway chassis, the switch's port and the default route
	// ("vpc name"). A Vpc's own sync leaves these rows alone.
	KindVpcExternal = "VpcExternal"
	// KindOvnFip, KindOvnSnatRule and KindOvnDnatRule own the NAT rows (and the DNAT load
	// balancer) of Kube-OVN's OVN NAT objects ("name").
	KindOvnFip      = "OvnFip"
	KindOvnSnatRule = "OvnSnatRule"
	KindOvnDnatRule = "OvnDnatRule"
)

// OwnedBy returns the external_ids that tag a row as created by edgeovn for the owner of the
// given kind ("Pod") and name ("namespace/name"). The map is new on every call, so callers may
// add their own keys to it.
func OwnedBy(kind, name string) map[string]string {
	return map[string]string{
		VendorKey:    Vendor,
		OwnerKindKey: kind,
		OwnerKey:     name,
	}
}

// IsOwned reports whether external_ids mark a row as edgeovn's.
func IsOwned(externalIDs map[string]string) bool {
	return externalIDs[VendorKey] == Vendor
}

// HasAll reports whether every key of want is in have with the same value.
func HasAll(have, want map[string]string) bool {
	for k, v := range want {
		got, ok := have[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}
