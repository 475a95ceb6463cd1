package kubeovn

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SubnetResource is the Subnet resource of Kube-OVN's API group.
var SubnetResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "subnets"}

// The built-in subnets' names, as in Kube-OVN: DefaultSubnet is the logical switch of the
// cluster CIDR, JoinSubnet the logical switch and IPAM subnet of the hosts' ovn0 addresses.
const (
	DefaultSubnet = "ovn-default"
	JoinSubnet    = "join"
)

// Kube-OVN's gateway types and protocols.
const (
	GatewayDistributed = "distributed"
	ProtocolIPv4       = "IPv4"
	ProtocolIPv6       = "IPv6"
	ProtocolDual       = "Dual"
)

// Subnet is a kubeovn.io/v1 Subnet: the fields edgeovn reads and writes. Others stay in the
// object (Unsupported names them).
type Subnet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SubnetSpec   `json:"spec"`
	Status            SubnetStatus `json:"status"`
}

// SubnetSpec holds the Subnet fields edgeovn implements, under Kube-OVN's names.
type SubnetSpec struct {
	Default     bool     `json:"default,omitempty"`
	Protocol    string   `json:"protocol,omitempty"`
	Namespaces  []string `json:"namespaces,omitempty"`
	CIDRBlock   string   `json:"cidrBlock,omitempty"`
	Gateway     string   `json:"gateway,omitempty"`
	ExcludeIps  []string `json:"excludeIps,omitempty"`
	GatewayType string   `json:"gatewayType,omitempty"`
	// GatewayNode lists a centralized Subnet's gateway hosts (gateway.go);
	// GatewayNodeSelectors chooses them by label instead when GatewayNode is empty; EnableEcmp
	// uses every ready one at once instead of the first.
	GatewayNode          string                 `json:"gatewayNode,omitempty"`
	GatewayNodeSelectors []metav1.LabelSelector `json:"gatewayNodeSelectors,omitempty"`
	EnableEcmp           bool                   `json:"enableEcmp,omitempty"`
	NatOutgoing          bool                   `json:"natOutgoing,omitempty"`
	Private              bool                   `json:"private,omitempty"`
	AllowSubnets         []string               `json:"allowSubnets,omitempty"`
	// Provider is "ovn" (or empty) for the pods' primary networks, "<nad>.<namespace>.ovn"
	// for the Subnet of a kube-ovn NetworkAttachmentDefinition (attachment networks),
	// "<nad>.<namespace>" for the Subnet another plugin's NAD takes addresses from with
	// "ipam": {"type": "kube-ovn"} (macvlan).
	Provider string `json:"provider,omitempty"`
	// Vlan names the Vlan of an underlay subnet; LogicalGateway and U2OInterconnection are
	// Kube-OVN's underlay options (underlay.go).
	Vlan               string `json:"vlan,omitempty"`
	LogicalGateway     bool   `json:"logicalGateway,omitempty"`
	U2OInterconnection bool   `json:"u2oInterconnection,omitempty"`
	// U2OInterconnectionIP pins the router's address on an underlay switch with
	// u2oInterconnection (empty: edgeovn picks one, as Kube-OVN's IPAM does).
	U2OInterconnectionIP string `json:"u2oInterconnectionIP,omitempty"`
	// Vpc names the Vpc whose router the Subnet's switch is on; empty or DefaultVpc: the
	// cluster router (vpc.go).
	Vpc string `json:"vpc,omitempty"`
	// ACLs are Kube-OVN's subnet ACLs, on the Subnet's switch at their own priorities;
	// AllowEWTraffic adds Kube-OVN's same-subnet allows beside them (package subnetacl).
	ACLs           []ACL `json:"acls,omitempty"`
	AllowEWTraffic bool  `json:"allowEWTraffic,omitempty"`
	// Mtu is the MTU of the Subnet's pod interfaces (0: the node's --mtu). Kube-OVN's type is
	// uint32; a wider one here lets a negative value be refused by name instead of failing
	// the whole object's decoding.
	Mtu int64 `json:"mtu,omitempty"`
	// DisableGatewayCheck turns off Kube-OVN's gateway ping at CNI ADD; edgeovn never pings
	// the gateway (its ADD waits for OVN's ovn-installed), so it changes nothing.
	DisableGatewayCheck bool `json:"disableGatewayCheck,omitempty"`
	// EnableMulticastSnoop turns on IGMP/MLD snooping and the querier on the Subnet's switch.
	EnableMulticastSnoop bool `json:"enableMulticastSnoop,omitempty"`
	// RouteTable binds the Subnet's router port to a route table of its router (OVN's
	// options:route_table): the Vpc's staticRoutes of that routeTable apply to the Subnet's
	// traffic, besides the main table's ("" only the main table).
	RouteTable string `json:"routeTable,omitempty"`
}

// ACL is one of Kube-OVN's subnet ACLs: an OVN ACL on the Subnet's logical switch.
type ACL struct {
	Direction string `json:"direction,omitempty"`
	Priority  int    `json:"priority,omitempty"`
	Match     string `json:"match,omitempty"`
	Action    string `json:"action,omitempty"`
}

// SubnetStatus is Kube-OVN's status shape: conditions and address counts per family.
type SubnetStatus struct {
	Conditions     []Condition `json:"conditions,omitempty"`
	V4AvailableIPs float64     `json:"v4availableIPs"`
	V4UsingIPs     float64     `json:"v4usingIPs"`
	V6AvailableIPs float64     `json:"v6availableIPs"`
	V6UsingIPs     float64     `json:"v6usingIPs"`
	// U2OInterconnectionIP and U2OInterconnectionMAC are the router port's address and MAC on
	// an underlay switch with u2oInterconnection, U2OInterconnectionVPC its router (Kube-OVN's
	// fields; empty when off).
	U2OInterconnectionIP  string `json:"u2oInterconnectionIP"`
	U2OInterconnectionMAC string `json:"u2oInterconnectionMAC"`
	U2OInterconnectionVPC string `json:"u2oInterconnectionVPC"`
	// ActivateGateway is a centralized Subnet's gateway host in use (Kube-OVN's field).
	ActivateGateway string `json:"activateGateway"`
}

// Condition is one of Kube-OVN's Subnet conditions (Ready, Validated, Error) or edgeovn's
// Unsupported.
type Condition struct {
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Reason             string      `json:"reason,omitempty"`
	Message            string      `json:"message,omitempty"`
	LastUpdateTime     metav1.Time `json:"lastUpdateTime,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// Condition types. Ready, Validated and Error are Kube-OVN's; Unsupported is edgeovn's and
// names the spec fields it does not implement.
const (
	ConditionReady       = "Ready"
	ConditionValidated   = "Validated"
	ConditionError       = "Error"
	ConditionUnsupported = "Unsupported"
)

// FromUnstructured reads a Subnet from the dynamic client's object.
func FromUnstructured(u *unstructured.Unstructured) (*Subnet, error) {
	var s Subnet
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s); err != nil {
		return nil, fmt.Errorf("read subnet %s: %w", u.GetName(), err)
	}
	return &s, nil
}

// ToUnstructured renders s for the dynamic client; s itself is not changed (callers and
// parallel tests share their Subnets).
func ToUnstructured(s *Subnet) (*unstructured.Unstructured, error) {
	c := *s
	c.APIVersion, c.Kind = SubnetResource.GroupVersion().String(), "Subnet"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c)
	if err != nil {
		return nil, fmt.Errorf("render subnet %s: %w", s.Name, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// FindCondition returns the condition of type t, or nil.
func (st *SubnetStatus) FindCondition(t string) *Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// SetCondition sets condition t, keeping its transition time when its status is unchanged and
// its update time when nothing changed at all; it reports whether anything changed.
func (st *SubnetStatus) SetCondition(t, status, reason, message string, now metav1.Time) bool {
	c := st.FindCondition(t)
	if c == nil {
		st.Conditions = append(st.Conditions, Condition{Type: t, Status: status, Reason: reason, Message: message,
			LastUpdateTime: now, LastTransitionTime: now})
		return true
	}
	if c.Status == status && c.Reason == reason && c.Message == message {
		return false
	}
	if c.Status != status {
		c.LastTransitionTime = now
	}
	c.Status, c.Reason, c.Message, c.LastUpdateTime = status, reason, message, now
	return true
}

// IsValidated says whether the controller accepted the Subnet's network.
func (s *Subnet) IsValidated() bool {
	c := s.Status.FindCondition(ConditionValidated)
	return c != nil && c.Status == "True"
}

// IsReady says whether the Subnet's network is in force: validated, or a refused change of an
// applied Subnet that keeps its CIDRs (the controller keeps Ready True then).
func (s *Subnet) IsReady() bool {
	c := s.Status.FindCondition(ConditionReady)
	return c != nil && c.Status == "True"
}
