package kubeovn

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ProviderNetworkResource and VlanResource are Kube-OVN's underlay resources. The plural of
// ProviderNetwork is Kube-OVN's "provider-networks".
var (
	ProviderNetworkResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "provider-networks"}
	VlanResource            = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "vlans"}
)

// MaxProviderNameLen bounds a ProviderNetwork's name: its bridge br-<name> is a kernel
// interface (at most 15 bytes).
const MaxProviderNameLen = 12

// MaxVlanID is the largest 802.1Q id Kube-OVN accepts; 0 means untagged.
const MaxVlanID = 4095

// Node labels a node role writes for a ProviderNetwork, as Kube-OVN's daemon does, and the
// annotation that carries a node's error (Kube-OVN puts it on its daemon pod; edgeovn has none
// and puts it on the Node).
const (
	ProviderReadyLabel     = "%s.provider-network.kubernetes.io/ready"
	ProviderInterfaceLabel = "%s.provider-network.kubernetes.io/interface"
	ProviderMTULabel       = "%s.provider-network.kubernetes.io/mtu"
	ProviderExcludeLabel   = "%s.provider-network.kubernetes.io/exclude"
	ProviderErrAnnotation  = "%s.provider-network.kubernetes.io/err_mesg"
)

// ErrInvalidUnderlay marks a ProviderNetwork or Vlan spec edgeovn refuses; the message names
// the field.
var ErrInvalidUnderlay = errors.New("invalid underlay spec")

// ProviderNetwork is a kubeovn.io/v1 ProviderNetwork: a host NIC per node that underlay
// subnets leave through, by its bridge br-<name>.
type ProviderNetwork struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ProviderNetworkSpec   `json:"spec"`
	Status            ProviderNetworkStatus `json:"status"`
}

// CustomInterface names the NIC of some nodes.
type CustomInterface struct {
	Interface string   `json:"interface"`
	Nodes     []string `json:"nodes"`
}

// ProviderNetworkSpec is Kube-OVN's spec, field names unchanged.
type ProviderNetworkSpec struct {
	DefaultInterface string            `json:"defaultInterface,omitempty"`
	CustomInterfaces []CustomInterface `json:"customInterfaces,omitempty"`
	// NodeSelector, when set, chooses the nodes and excludeNodes is not read (Kube-OVN's
	// IsNodeExcludedFromProviderNetwork).
	NodeSelector                *metav1.LabelSelector `json:"nodeSelector,omitempty"`
	ExcludeNodes                []string              `json:"excludeNodes,omitempty"`
	ExchangeLinkName            bool                  `json:"exchangeLinkName,omitempty"`
	AutoCreateVlanSubinterfaces bool                  `json:"autoCreateVlanSubinterfaces,omitempty"`
	PreserveVlanInterfaces      bool                  `json:"preserveVlanInterfaces,omitempty"`
	VlanInterfaces              []string              `json:"vlanInterfaces,omitempty"`
}

// ProviderNetworkCondition is one node's condition.
type ProviderNetworkCondition struct {
	Node      string `json:"node"`
	Condition `json:",inline"`
}

// ProviderNetworkStatus is Kube-OVN's status shape.
type ProviderNetworkStatus struct {
	Ready         bool                       `json:"ready"`
	ReadyNodes    []string                   `json:"readyNodes,omitempty"`
	NotReadyNodes []string                   `json:"notReadyNodes,omitempty"`
	Vlans         []string                   `json:"vlans,omitempty"`
	Conditions    []ProviderNetworkCondition `json:"conditions,omitempty"`
}

// Vlan is a kubeovn.io/v1 Vlan: a tag (0: none) on a provider network.
type Vlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              VlanSpec   `json:"spec"`
	Status            VlanStatus `json:"status"`
}

// VlanSpec is Kube-OVN's spec; vlanId and providerInterfaceName are its deprecated spellings
// of id and provider, still read.
type VlanSpec struct {
	ID                    int    `json:"id"`
	Provider              string `json:"provider,omitempty"`
	VlanID                int    `json:"vlanId,omitempty"`
	ProviderInterfaceName string `json:"providerInterfaceName,omitempty"`
}

// VlanStatus is Kube-OVN's status shape.
type VlanStatus struct {
	Subnets    []string    `json:"subnets,omitempty"`
	Conflict   bool        `json:"conflict,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// ProviderNetworkFrom reads a ProviderNetwork from the dynamic client's object.
func ProviderNetworkFrom(u *unstructured.Unstructured) (*ProviderNetwork, error) {
	var pn ProviderNetwork
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &pn); err != nil {
		return nil, fmt.Errorf("read provider network %s: %w", u.GetName(), err)
	}
	return &pn, nil
}

// VlanFrom reads a Vlan from the dynamic client's object.
func VlanFrom(u *unstructured.Unstructured) (*Vlan, error) {
	var v Vlan
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
		return nil, fmt.Errorf("read vlan %s: %w", u.GetName(), err)
	}
	return &v, nil
}

// BridgeName is the OVS bridge of provider network name, as Kube-OVN names it.
func BridgeName(provider string) string { return "br-" + provider }

// ValidateProviderName checks a provider network's name: a DNS label short enough that
// br-<name> is a kernel interface name.
func ValidateProviderName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("%w: provider network name %q: %s", ErrInvalidUnderlay, name, strings.Join(errs, "; "))
	}
	if len(name) > MaxProviderNameLen {
		return fmt.Errorf("%w: provider network name %q is %d characters, at most %d (its bridge br-%s must be a kernel interface name)",
			ErrInvalidUnderlay, name, len(name), MaxProviderNameLen, name)
	}
	return nil
}

// ValidateInterfaceName checks a kernel interface name as the kernel does (dev_valid_name):
// 1 to 15 bytes, not "." or "..", no '/', ':' or white space.
func ValidateInterfaceName(field, name string) error {
	bad := name == "" || len(name) > 15 || name == "." || name == ".." ||
		strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r == ':' || unicode.IsSpace(r) || r > unicode.MaxASCII })
	if bad {
		return fmt.Errorf("%w: %s %q is not an interface name (1-15 characters, none of '/', ':', space)", ErrInvalidUnderlay, field, name)
	}
	return nil
}

// Validate checks the spec: the name, every interface name, and that no node is named by two
// customInterfaces entries.
func (pn *ProviderNetwork) Validate() error {
	if err := ValidateProviderName(pn.Name); err != nil {
		return err
	}
	if err := ValidateInterfaceName("spec.defaultInterface", pn.Spec.DefaultInterface); err != nil {
		return err
	}
	if pn.Spec.NodeSelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(pn.Spec.NodeSelector); err != nil {
			return fmt.Errorf("%w: spec.nodeSelector: %w", ErrInvalidUnderlay, err)
		}
	}
	for i, name := range pn.Spec.VlanInterfaces {
		if err := ValidateInterfaceName(fmt.Sprintf("spec.vlanInterfaces[%d]", i), name); err != nil {
			return err
		}
	}
	seen := map[string]int{}
	for i, ci := range pn.Spec.CustomInterfaces {
		if err := ValidateInterfaceName(fmt.Sprintf("spec.customInterfaces[%d].interface", i), ci.Interface); err != nil {
			return err
		}
		for _, n := range ci.Nodes {
			if j, ok := seen[n]; ok && j != i {
				return fmt.Errorf("%w: spec.customInterfaces[%d].nodes: node %s is also in customInterfaces[%d]", ErrInvalidUnderlay, i, n, j)
			}
			seen[n] = i
		}
	}
	return nil
}

// NodeInterface is the NIC the provider network uses on node, and false when the node is
// excluded: with spec.nodeSelector, when nodeLabels do not match it (excludeNodes is then
// not read, as in Kube-OVN); without, when excludeNodes names it. An invalid selector excludes
// no node (Validate refuses it, naming the field).
func (pn *ProviderNetwork) NodeInterface(node string, nodeLabels map[string]string) (string, bool) {
	if pn.Spec.NodeSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(pn.Spec.NodeSelector)
		if err == nil && !sel.Matches(labels.Set(nodeLabels)) {
			return "", false
		}
	} else if slices.Contains(pn.Spec.ExcludeNodes, node) {
		return "", false
	}
	for _, ci := range pn.Spec.CustomInterfaces {
		if slices.Contains(ci.Nodes, node) {
			return ci.Interface, true
		}
	}
	return pn.Spec.DefaultInterface, true
}

// Tag is the Vlan's id (the deprecated vlanId when id is 0) and its provider (the deprecated
// providerInterfaceName when provider is empty), validated: id 0-4095, a provider name.
func (v *Vlan) Tag() (id int, provider string, err error) {
	id, provider = v.Spec.ID, v.Spec.Provider
	field := "spec.id"
	if id == 0 && v.Spec.VlanID != 0 {
		id, field = v.Spec.VlanID, "spec.vlanId"
	}
	if provider == "" {
		provider = v.Spec.ProviderInterfaceName
	}
	if id < 0 || id > MaxVlanID {
		return 0, "", fmt.Errorf("%w: vlan %s: %s %d is out of range 0-%d", ErrInvalidUnderlay, v.Name, field, id, MaxVlanID)
	}
	if provider == "" {
		return 0, "", fmt.Errorf("%w: vlan %s: spec.provider is empty", ErrInvalidUnderlay, v.Name)
	}
	if err := ValidateProviderName(provider); err != nil {
		return 0, "", fmt.Errorf("vlan %s: spec.provider: %w", v.Name, err)
	}
	return id, provider, nil
}

// NodeCondition returns node's condition of type t, or nil.
func (st *ProviderNetworkStatus) NodeCondition(node, t string) *ProviderNetworkCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Node == node && st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// RemoveNode removes node's conditions (the node no longer serves the network); it reports
// whether there were any.
func (st *ProviderNetworkStatus) RemoveNode(node string) bool {
	n := len(st.Conditions)
	st.Conditions = slices.DeleteFunc(st.Conditions, func(c ProviderNetworkCondition) bool { return c.Node == node })
	return len(st.Conditions) != n
}

// SetNodeCondition sets node's condition t as SubnetStatus.SetCondition does; it reports
// whether anything changed.
func (st *ProviderNetworkStatus) SetNodeCondition(node, t, status, reason, message string, now metav1.Time) bool {
	c := st.NodeCondition(node, t)
	if c == nil {
		st.Conditions = append(st.Conditions, ProviderNetworkCondition{Node: node, Condition: Condition{Type: t, Status: status,
			Reason: reason, Message: message, LastUpdateTime: now, LastTransitionTime: now}})
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
