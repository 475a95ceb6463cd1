package kubeovn

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kube-OVN's OVN-native NAT resources (cluster-scoped).
var (
	OvnEipResource      = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "ovn-eips"}
	OvnFipResource      = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "ovn-fips"}
	OvnSnatRuleResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "ovn-snat-rules"}
	OvnDnatRuleResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "ovn-dnat-rules"}
)

// Kube-OVN's names for the external network and the EIP and FIP types.
const (
	// ExternalSubnet is Kube-OVN's default external subnet (--external-gateway-switch).
	ExternalSubnet = "external"
	// ExternalGatewayConfig is the ConfigMap in kube-system that names the gateway nodes
	// (external-gw-nodes) and the default FIP type (type).
	ExternalGatewayConfig = "ovn-external-gw-config"
	EipTypeNat            = "nat"
	EipTypeLrp            = "lrp"
	EipTypeLsp            = "lsp"
	GWDistributed         = "distributed"
	GWCentralized         = "centralized"
)

// OvnEip is a kubeovn.io/v1 OvnEip: an address of the external subnet.
type OvnEip struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              OvnEipSpec   `json:"spec"`
	Status            OvnEipStatus `json:"status"`
}

// OvnEipSpec is Kube-OVN's spec, field names unchanged.
type OvnEipSpec struct {
	ExternalSubnet string `json:"externalSubnet,omitempty"`
	V4Ip           string `json:"v4Ip,omitempty"`
	V6Ip           string `json:"v6Ip,omitempty"`
	MacAddress     string `json:"macAddress,omitempty"`
	Type           string `json:"type,omitempty"`
}

// OvnEipStatus is Kube-OVN's status.
type OvnEipStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
	Type       string      `json:"type"`
	Nat        string      `json:"nat"`
	Ready      bool        `json:"ready"`
	V4Ip       string      `json:"v4Ip"`
	V6Ip       string      `json:"v6Ip"`
	MacAddress string      `json:"macAddress"`
}

// OvnFip is a kubeovn.io/v1 OvnFip: one EIP to one internal address (dnat_and_snat).
type OvnFip struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              OvnFipSpec   `json:"spec"`
	Status            OvnFipStatus `json:"status"`
}

// OvnFipSpec is Kube-OVN's spec; ipName names an IP object, which edgeovn reads as the pod
// port of that name ("<pod>.<namespace>", Kube-OVN's IP object name for a pod).
type OvnFipSpec struct {
	OvnEip string `json:"ovnEip,omitempty"`
	IPType string `json:"ipType,omitempty"`
	IPName string `json:"ipName,omitempty"`
	Vpc    string `json:"vpc,omitempty"`
	V4Ip   string `json:"v4Ip,omitempty"`
	V6Ip   string `json:"v6Ip,omitempty"`
	Type   string `json:"type,omitempty"`
}

// OvnFipStatus is Kube-OVN's status.
type OvnFipStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
	Ready      bool        `json:"ready"`
	Vpc        string      `json:"vpc"`
	V4Eip      string      `json:"v4Eip"`
	V6Eip      string      `json:"v6Eip"`
	V4Ip       string      `json:"v4Ip"`
	V6Ip       string      `json:"v6Ip"`
	MacAddress string      `json:"macAddress"`
}

// OvnSnatRule is a kubeovn.io/v1 OvnSnatRule: a VPC subnet (or CIDR) leaves from an EIP.
type OvnSnatRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              OvnSnatRuleSpec   `json:"spec"`
	Status            OvnSnatRuleStatus `json:"status"`
}

// OvnSnatRuleSpec is Kube-OVN's spec, field names unchanged.
type OvnSnatRuleSpec struct {
	OvnEip    string `json:"ovnEip,omitempty"`
	VpcSubnet string `json:"vpcSubnet,omitempty"`
	IPName    string `json:"ipName,omitempty"`
	Vpc       string `json:"vpc,omitempty"`
	V4IpCidr  string `json:"v4IpCidr,omitempty"`
	V6IpCidr  string `json:"v6IpCidr,omitempty"`
}

// OvnSnatRuleStatus is Kube-OVN's status.
type OvnSnatRuleStatus struct {
	Conditions []Condition `json:"conditions,omitempty"`
	Ready      bool        `json:"ready"`
	Vpc        string      `json:"vpc"`
	V4Eip      string      `json:"v4Eip"`
	V6Eip      string      `json:"v6Eip"`
	V4IpCidr   string      `json:"v4IpCidr"`
	V6IpCidr   string      `json:"v6IpCidr"`
}

// OvnDnatRule is a kubeovn.io/v1 OvnDnatRule: one port of an EIP to a port of an internal
// address.
type OvnDnatRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              OvnDnatRuleSpec   `json:"spec"`
	Status            OvnDnatRuleStatus `json:"status"`
}

// OvnDnatRuleSpec is Kube-OVN's spec, field names unchanged.
type OvnDnatRuleSpec struct {
	OvnEip       string `json:"ovnEip,omitempty"`
	IPType       string `json:"ipType,omitempty"`
	IPName       string `json:"ipName,omitempty"`
	InternalPort string `json:"internalPort,omitempty"`
	ExternalPort string `json:"externalPort,omitempty"`
	Protocol     string `json:"protocol,omitempty"`
	Vpc          string `json:"vpc,omitempty"`
	V4Ip         string `json:"v4Ip,omitempty"`
	V6Ip         string `json:"v6Ip,omitempty"`
}

// OvnDnatRuleStatus is Kube-OVN's status.
type OvnDnatRuleStatus struct {
	Vpc          string      `json:"vpc"`
	V4Eip        string      `json:"v4Eip"`
	V6Eip        string      `json:"v6Eip"`
	ExternalPort string      `json:"externalPort"`
	V4Ip         string      `json:"v4Ip"`
	V6Ip         string      `json:"v6Ip"`
	InternalPort string      `json:"internalPort"`
	Protocol     string      `json:"protocol,omitempty"`
	IPName       string      `json:"ipName"`
	Ready        bool        `json:"ready"`
	Conditions   []Condition `json:"conditions,omitempty"`
}

// Common returns the conditions and ready flag every NAT object's status has.
func (s *OvnEipStatus) Common() (*[]Condition, *bool) { return &s.Conditions, &s.Ready }

// Common returns the conditions and ready flag every NAT object's status has.
func (s *OvnFipStatus) Common() (*[]Condition, *bool) { return &s.Conditions, &s.Ready }

// Common returns the conditions and ready flag every NAT object's status has.
func (s *OvnSnatRuleStatus) Common() (*[]Condition, *bool) { return &s.Conditions, &s.Ready }

// Common returns the conditions and ready flag every NAT object's status has.
func (s *OvnDnatRuleStatus) Common() (*[]Condition, *bool) { return &s.Conditions, &s.Ready }

// SetNatCondition sets one condition of a NAT object's conditions, reporting a change.
func SetNatCondition(conds *[]Condition, t, status, reason, message string, now metav1.Time) bool {
	s := SubnetStatus{Conditions: *conds}
	changed := s.SetCondition(t, status, reason, message, now)
	*conds = s.Conditions
	return changed
}

// FromObject converts an unstructured kubeovn.io object into out (*OvnEip, *OvnFip, ...).
func FromObject(u *unstructured.Unstructured, out any) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return fmt.Errorf("read %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
