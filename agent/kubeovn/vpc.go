package kubeovn

import (
	"errors"
	"fmt"
	"net/netip"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// VpcResource is Kube-OVN's Vpc resource (cluster-scoped).
var VpcResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "vpcs"}

// DefaultVpc is the name of Kube-OVN's default VPC, which is the cluster router's name too
// ("ovn-cluster"): a Subnet whose spec.vpc is empty or this is on the cluster router.
const DefaultVpc = "ovn-cluster"

// Kube-OVN's static route policies and policy route actions.
const (
	PolicySrc     = "policySrc"
	PolicyDst     = "policyDst"
	ActionAllow   = "allow"
	ActionDrop    = "drop"
	ActionReroute = "reroute"
)

// ErrInvalidVpc marks a Vpc spec edgeovn refuses; the message names the field.
var ErrInvalidVpc = errors.New("invalid vpc spec")

// Vpc is a kubeovn.io/v1 Vpc: a logical router of its own.
type Vpc struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              VpcSpec   `json:"spec"`
	Status            VpcStatus `json:"status"`
}

// VpcSpec is Kube-OVN's spec, field names unchanged; fields edgeovn does not implement
// (enableBfd, bfdPort, extraExternalSubnets, enableExternal) are named in Unsupported.
type VpcSpec struct {
	DefaultSubnet  string        `json:"defaultSubnet,omitempty"`
	Namespaces     []string      `json:"namespaces,omitempty"`
	StaticRoutes   []StaticRoute `json:"staticRoutes,omitempty"`
	PolicyRoutes   []PolicyRoute `json:"policyRoutes,omitempty"`
	VpcPeerings    []VpcPeering  `json:"vpcPeerings,omitempty"`
	EnableExternal bool          `json:"enableExternal,omitempty"`
}

// StaticRoute is one of a Vpc's static routes; bfdId is not read.
type StaticRoute struct {
	Policy     string `json:"policy,omitempty"`
	CIDR       string `json:"cidr"`
	NextHopIP  string `json:"nextHopIP"`
	ECMPMode   string `json:"ecmpMode"`
	RouteTable string `json:"routeTable"`
}

// PolicyRoute is one of a Vpc's router policies.
type PolicyRoute struct {
	Priority  int    `json:"priority,omitempty"`
	Match     string `json:"match,omitempty"`
	Action    string `json:"action,omitempty"`
	NextHopIP string `json:"nextHopIP,omitempty"`
}

// VpcPeering connects the Vpc's router to another Vpc's.
type VpcPeering struct {
	RemoteVpc      string `json:"remoteVpc,omitempty"`
	LocalConnectIP string `json:"localConnectIP,omitempty"`
}

// VpcStatus is Kube-OVN's status shape (the load balancer and BFD fields stay empty).
type VpcStatus struct {
	Conditions           []Condition `json:"conditions,omitempty"`
	Standby              bool        `json:"standby"`
	Default              bool        `json:"default"`
	DefaultLogicalSwitch string      `json:"defaultLogicalSwitch"`
	Router               string      `json:"router"`
	Subnets              []string    `json:"subnets"`
	VpcPeerings          []string    `json:"vpcPeerings"`
	EnableExternal       bool        `json:"enableExternal"`
}

// VpcFrom reads a Vpc from the dynamic client's object.
func VpcFrom(u *unstructured.Unstructured) (*Vpc, error) {
	var v Vpc
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
		return nil, fmt.Errorf("read vpc %s: %w", u.GetName(), err)
	}
	return &v, nil
}

// VpcOf is the Vpc a Subnet spec names, DefaultVpc when it names none.
func VpcOf(spec SubnetSpec) string {
	if spec.Vpc == "" {
		return DefaultVpc
	}
	return spec.Vpc
}

// Kube-OVN's static route ecmpMode values: several routes of one cidr (and policy and route
// table) with different next hops are an ECMP group whatever the mode; ECMPSymmetricReply
// also sends a connection's replies back over the route it came in by.
const (
	ECMPModeECMP       = "ecmp"
	ECMPSymmetricReply = "ecmp_symmetric_reply"
)

// Route is a parsed static route.
type Route struct {
	Prefix         netip.Prefix
	NextHop        netip.Addr
	SrcIP          bool   // policySrc
	RouteTable     string // "" the main table
	SymmetricReply bool   // ecmpMode ecmp_symmetric_reply
}

// ParseStaticRoute reads staticRoutes[i]: cidr (an address is its /32 or /128), nextHopIP of
// its family, policy policyDst (default) or policySrc, ecmpMode "", ecmp or
// ecmp_symmetric_reply, routeTable a route table's name ("" the main table; letters, digits,
// '-', '_', '.', at most 63). Whether the routes of a group agree is the caller's check.
func ParseStaticRoute(i int, r StaticRoute) (Route, error) {
	field := fmt.Sprintf("staticRoutes[%d]", i)
	p, err := netip.ParsePrefix(r.CIDR)
	if err != nil {
		a, aerr := netip.ParseAddr(r.CIDR)
		if aerr != nil {
			return Route{}, fmt.Errorf("%w: %s.cidr %q is not a CIDR or an address", ErrInvalidVpc, field, r.CIDR)
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	hop, err := netip.ParseAddr(r.NextHopIP)
	if err != nil || hop.Is4() != p.Addr().Is4() {
		return Route{}, fmt.Errorf("%w: %s.nextHopIP %q is not an address of cidr %s's family", ErrInvalidVpc, field, r.NextHopIP, r.CIDR)
	}
	if r.Policy != "" && r.Policy != PolicyDst && r.Policy != PolicySrc {
		return Route{}, fmt.Errorf("%w: %s.policy %q: want %s or %s", ErrInvalidVpc, field, r.Policy, PolicyDst, PolicySrc)
	}
	if r.ECMPMode != "" && r.ECMPMode != ECMPModeECMP && r.ECMPMode != ECMPSymmetricReply {
		return Route{}, fmt.Errorf("%w: %s.ecmpMode %q: want %s or %s (or none)", ErrInvalidVpc, field, r.ECMPMode, ECMPModeECMP, ECMPSymmetricReply)
	}
	if err := ValidateRouteTable(r.RouteTable); err != nil {
		return Route{}, fmt.Errorf("%w: %s.routeTable: %w", ErrInvalidVpc, field, err)
	}
	return Route{Prefix: p.Masked(), NextHop: hop, SrcIP: r.Policy == PolicySrc, RouteTable: r.RouteTable,
		SymmetricReply: r.ECMPMode == ECMPSymmetricReply}, nil
}

// ValidateRouteTable refuses a route table name (a static route's or a Subnet's routeTable)
// that is not 1-63 letters, digits, '-', '_' or '.'; "" is the main table. OVN and Kube-OVN
// take any string: these are the names that read the same in ovn-nbctl, logs and YAML.
func ValidateRouteTable(name string) error {
	if len(name) > 63 {
		return fmt.Errorf("%q is longer than 63 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("%q: only letters, digits, '-', '_' and '.'", name)
		}
	}
	return nil
}

// Policy is a parsed policy route.
type Policy struct {
	Priority int
	Match    string
	Action   string
	NextHop  netip.Addr // reroute only
}

// ParsePolicyRoute reads policyRoutes[i]: priority 0-32767, a non-empty match (its syntax is
// checked by the caller), action allow, drop or reroute, nextHopIP for reroute only.
func ParsePolicyRoute(i int, r PolicyRoute) (Policy, error) {
	field := fmt.Sprintf("policyRoutes[%d]", i)
	out := Policy{Priority: r.Priority, Match: r.Match, Action: r.Action}
	switch {
	case r.Priority < 0 || r.Priority > 32767:
		return out, fmt.Errorf("%w: %s.priority %d is outside 0-32767", ErrInvalidVpc, field, r.Priority)
	case r.Match == "":
		return out, fmt.Errorf("%w: %s.match is empty", ErrInvalidVpc, field)
	case r.Action != ActionAllow && r.Action != ActionDrop && r.Action != ActionReroute:
		return out, fmt.Errorf("%w: %s.action %q: want allow, drop or reroute", ErrInvalidVpc, field, r.Action)
	case r.Action != ActionReroute && r.NextHopIP != "":
		return out, fmt.Errorf("%w: %s.nextHopIP is only for action reroute", ErrInvalidVpc, field)
	case r.Action != ActionReroute:
		return out, nil
	}
	hop, err := netip.ParseAddr(r.NextHopIP)
	if err != nil {
		return out, fmt.Errorf("%w: %s.nextHopIP %q is not an address", ErrInvalidVpc, field, r.NextHopIP)
	}
	out.NextHop = hop
	return out, nil
}

// SetCondition sets condition t as SubnetStatus.SetCondition does.
func (st *VpcStatus) SetCondition(t, status, reason, message string, now metav1.Time) bool {
	s := SubnetStatus{Conditions: st.Conditions}
	changed := s.SetCondition(t, status, reason, message, now)
	st.Conditions = s.Conditions
	return changed
}

// ParsePeering reads vpcPeerings[i]: remoteVpc another Vpc's name, localConnectIP an address
// with its prefix ("169.254.0.1/30"), as Kube-OVN requires.
func ParsePeering(i int, name string, p VpcPeering) (netip.Prefix, error) {
	field := fmt.Sprintf("vpcPeerings[%d]", i)
	if p.RemoteVpc == "" || p.RemoteVpc == name {
		return netip.Prefix{}, fmt.Errorf("%w: %s.remoteVpc %q: want another Vpc's name", ErrInvalidVpc, field, p.RemoteVpc)
	}
	local, err := netip.ParsePrefix(p.LocalConnectIP)
	if err != nil || local.Bits() == local.Addr().BitLen() {
		return netip.Prefix{}, fmt.Errorf("%w: %s.localConnectIP %q: want an address with its prefix (169.254.0.1/30)", ErrInvalidVpc, field, p.LocalConnectIP)
	}
	return local, nil
}
