// Package kubeovn is the part of Kube-OVN's API (kubeovn.io/v1) that edgeovn serves: the
// Subnet custom resource. It owns the CRD (crd.yaml, installed by EnsureCRD when the cluster
// has none, so Kube-OVN's manifests apply unchanged and a CRD Kube-OVN installed is kept), the
// typed structs of the fields edgeovn reads and writes, their conversion from the dynamic
// client's unstructured objects, the parsing of a Subnet's network (cidrBlock "v4,v6",
// gateway one per cidrBlock entry in its order, excludeIps in Kube-OVN's "a..b" form, protocol
// derived from cidrBlock as Kube-OVN does; families and gateways checked by ipam/netfamily,
// the validator the flags and the northbound share), of allowSubnets (ParseAllowSubnets:
// every entry a CIDR, as Kube-OVN validates it) and the list of spec fields edgeovn does not
// implement (Unsupported), which the controller names in the Subnet's status. For underlay
// networks it serves Kube-OVN's ProviderNetwork and Vlan (underlay.go, crd_underlay.yaml, the
// CRDs installed by EnsureCRD beside the Subnet's): their structs, their checks (a provider
// name that fits br-<name> in an interface name, kernel interface names, a node in one
// customInterfaces entry, a Vlan id 0-4095), and which NIC a network uses on a node. For
// custom VPCs it serves Kube-OVN's Vpc (vpc.go, crd_vpc.yaml copied from Kube-OVN's chart):
// its structs, DefaultVpc ("ovn-cluster", a Subnet with no spec.vpc), and the parsing of
// staticRoutes and policyRoutes entries, each error naming its field ("staticRoutes[0].cidr").
// What every controller feature writes of the objects it owns is here once (writer.go): the
// finalizer on and off (guarded by the object's resourceVersion), the status patch (only when
// it changed: UpdateStatus), and the Validated, Ready and Error conditions of an applied or a
// refused spec.
//
// Invariants: parsing never changes the object; a Subnet whose network does not parse is
// reported, never half applied. The CRD's schema keeps every field a manifest sets
// (x-kubernetes-preserve-unknown-fields on spec), so a field edgeovn does not know is seen and
// named, not pruned in silence; and it refuses a change of spec.cidrBlock (a CEL transition
// rule), which would strand the addresses already handed out.
package kubeovn
