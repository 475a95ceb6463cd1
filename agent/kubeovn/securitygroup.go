package kubeovn

import (
	"crypto/md5" //nolint:gosec // a change marker in status, as Kube-OVN's ingressMd5
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SecurityGroupResource is Kube-OVN's SecurityGroup resource (cluster-scoped).
var SecurityGroupResource = schema.GroupVersionResource{Group: "kubeovn.io", Version: "v1", Resource: "security-groups"}

// ErrInvalidSecurityGroup marks a SecurityGroup spec edgeovn refuses; the message names the
// field ("ingressRules[0].portRangeMin").
var ErrInvalidSecurityGroup = errors.New("invalid security group spec")

// Kube-OVN's rule values.
const (
	SgRemoteAddress = "address"
	SgRemoteGroup   = "securityGroup"
	SgProtocolAll   = "all"
	SgProtocolICMP  = "icmp"
	SgProtocolTCP   = "tcp"
	SgProtocolUDP   = "udp"
	SgPolicyAllow   = "allow"
	SgPolicyDrop    = "drop"
	// SgPolicyDeny is what Kube-OVN's documentation writes; its controller drops for any
	// policy but allow and pass.
	SgPolicyDeny = "deny"
	// SgPolicyPass hands the packet to the next ACL tier: OVN 23.03 has no tiers.
	SgPolicyPass = "pass"
	// SgPriorityMin and SgPriorityMax bound a rule's priority (a lower number wins).
	SgPriorityMin = 1
	SgPriorityMax = 16384
)

// SecurityGroup is a kubeovn.io/v1 SecurityGroup: rules for the pods that name it in
// ovn.kubernetes.io/security_groups.
type SecurityGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              SecurityGroupSpec   `json:"spec"`
	Status            SecurityGroupStatus `json:"status"`
}

// SecurityGroupSpec is Kube-OVN's spec, field names unchanged.
type SecurityGroupSpec struct {
	IngressRules          []SecurityGroupRule `json:"ingressRules,omitempty"`
	EgressRules           []SecurityGroupRule `json:"egressRules,omitempty"`
	AllowSameGroupTraffic bool                `json:"allowSameGroupTraffic,omitempty"`
	// Tier other than 0 is refused: OVN 23.03 has no ACL tiers.
	Tier int `json:"tier,omitempty"`
}

// SecurityGroupRule is one ingress or egress rule.
type SecurityGroupRule struct {
	IPVersion           string `json:"ipVersion"`
	Protocol            string `json:"protocol,omitempty"`
	Priority            int    `json:"priority,omitempty"`
	RemoteType          string `json:"remoteType"`
	RemoteAddress       string `json:"remoteAddress,omitempty"`
	RemoteSecurityGroup string `json:"remoteSecurityGroup,omitempty"`
	PortRangeMin        int    `json:"portRangeMin,omitempty"`
	PortRangeMax        int    `json:"portRangeMax,omitempty"`
	LocalAddress        string `json:"localAddress,omitempty"`
	SourcePortRangeMin  int    `json:"sourcePortRangeMin,omitempty"`
	SourcePortRangeMax  int    `json:"sourcePortRangeMax,omitempty"`
	Policy              string `json:"policy"`
}

// SecurityGroupStatus is Kube-OVN's status and edgeovn's conditions.
type SecurityGroupStatus struct {
	PortGroup              string      `json:"portGroup"`
	AllowSameGroupTraffic  bool        `json:"allowSameGroupTraffic"`
	IngressMd5             string      `json:"ingressMd5"`
	EgressMd5              string      `json:"egressMd5"`
	IngressLastSyncSuccess bool        `json:"ingressLastSyncSuccess"`
	EgressLastSyncSuccess  bool        `json:"egressLastSyncSuccess"`
	Conditions             []Condition `json:"conditions,omitempty"`
}

// SetCondition sets condition t as SubnetStatus.SetCondition does.
func (st *SecurityGroupStatus) SetCondition(t, status, reason, message string, now metav1.Time) bool {
	s := SubnetStatus{Conditions: st.Conditions}
	changed := s.SetCondition(t, status, reason, message, now)
	st.Conditions = s.Conditions
	return changed
}

// SecurityGroupFrom reads a SecurityGroup from the dynamic client's object.
func SecurityGroupFrom(u *unstructured.Unstructured) (*SecurityGroup, error) {
	var sg SecurityGroup
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sg); err != nil {
		return nil, fmt.Errorf("%w: read security group %s: %v", ErrInvalidSecurityGroup, u.GetName(), err)
	}
	return &sg, nil
}

// RulesMd5 is the hash of a direction's rules that status.ingressMd5 and egressMd5 carry.
func RulesMd5(rules []SecurityGroupRule) string {
	b, _ := json.Marshal(rules)
	sum := md5.Sum(b) //nolint:gosec // a change marker, not a secret
	return hex.EncodeToString(sum[:])
}

// SgRule is a parsed rule.
type SgRule struct {
	IPv6     bool
	Protocol string // all, icmp, tcp, udp
	Priority int
	// Remote is the remote address or CIDR (RemoteType address); RemoteGroup the remote
	// SecurityGroup's name (RemoteType securityGroup).
	Remote      netip.Prefix
	RemoteGroup string
	// Ports is portRangeMin-portRangeMax (tcp and udp; zero: none).
	Ports [2]int
	// Local is localAddress (invalid: none); SourcePorts its source port range (tcp, udp).
	Local       netip.Prefix
	SourcePorts [2]int
	Allow       bool // allow; else drop
}

// ParseSgRule reads one rule as Kube-OVN validates it, field names its place
// ("ingressRules[0]"); every error names the field.
func ParseSgRule(field string, r SecurityGroupRule) (SgRule, error) {
	bad := func(f, format string, args ...any) error {
		return fmt.Errorf("%w: %s.%s %s", ErrInvalidSecurityGroup, field, f, fmt.Sprintf(format, args...))
	}
	var out SgRule
	switch r.IPVersion {
	case "ipv4":
	case "ipv6":
		out.IPv6 = true
	default:
		return out, bad("ipVersion", "%q: want ipv4 or ipv6", r.IPVersion)
	}
	if r.Priority < SgPriorityMin || r.Priority > SgPriorityMax {
		return out, bad("priority", "%d is out of range %d-%d", r.Priority, SgPriorityMin, SgPriorityMax)
	}
	out.Priority = r.Priority
	switch p := strings.ToLower(r.Protocol); p {
	case "", SgProtocolAll:
		out.Protocol = SgProtocolAll
	case SgProtocolICMP, SgProtocolTCP, SgProtocolUDP:
		out.Protocol = p
	default:
		return out, bad("protocol", "%q: want all, icmp, tcp or udp", r.Protocol)
	}
	switch r.Policy {
	case SgPolicyAllow:
		out.Allow = true
	case SgPolicyDrop, SgPolicyDeny:
	case SgPolicyPass:
		return out, bad("policy", "pass needs OVN ACL tiers (OVN 23.06 and later); this OVN (23.03) has none")
	default:
		return out, bad("policy", "%q: want allow, drop or deny", r.Policy)
	}
	if err := parseRemote(field, r, &out); err != nil {
		return out, err
	}
	if r.LocalAddress != "" {
		p, err := parsePrefix(r.LocalAddress, out.IPv6)
		if err != nil {
			return out, bad("localAddress", "%q: %v", r.LocalAddress, err)
		}
		out.Local = p
	}
	if out.Protocol == SgProtocolTCP || out.Protocol == SgProtocolUDP {
		ports, err := portRange(field, "portRange", r.PortRangeMin, r.PortRangeMax)
		if err != nil {
			return out, err
		}
		out.Ports = ports
		if out.Local.IsValid() {
			if out.SourcePorts, err = portRange(field, "sourcePortRange", r.SourcePortRangeMin, r.SourcePortRangeMax); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// parseRemote reads remoteType and its address or group.
func parseRemote(field string, r SecurityGroupRule, out *SgRule) error {
	switch r.RemoteType {
	case SgRemoteAddress:
		p, err := parsePrefix(r.RemoteAddress, out.IPv6)
		if err != nil {
			return fmt.Errorf("%w: %s.remoteAddress %q: %v", ErrInvalidSecurityGroup, field, r.RemoteAddress, err)
		}
		out.Remote = p
	case SgRemoteGroup:
		if r.RemoteSecurityGroup == "" {
			return fmt.Errorf("%w: %s.remoteSecurityGroup is empty: remoteType securityGroup names a group", ErrInvalidSecurityGroup, field)
		}
		out.RemoteGroup = r.RemoteSecurityGroup
	default:
		return fmt.Errorf("%w: %s.remoteType %q: want address or securityGroup", ErrInvalidSecurityGroup, field, r.RemoteType)
	}
	return nil
}

// parsePrefix reads an address (its /32 or /128) or a CIDR of the rule's family.
func parsePrefix(s string, v6 bool) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, aerr := netip.ParseAddr(s)
		if aerr != nil {
			return p, errors.New("not an address or a CIDR")
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is6() != v6 || p.Addr().Is4In6() {
		return p, errors.New("not of the rule's ipVersion")
	}
	return p.Masked(), nil
}

// portRange checks a port range (name "portRange": portRangeMin, portRangeMax) as Kube-OVN
// does: both ends 1-65535, Min not above Max.
func portRange(field, name string, lo, hi int) ([2]int, error) {
	for _, e := range []struct {
		end string
		v   int
	}{{"Min", lo}, {"Max", hi}} {
		if e.v < 1 || e.v > 65535 {
			return [2]int{}, fmt.Errorf("%w: %s.%s%s %d is out of range 1-65535 (tcp and udp rules need a port range)",
				ErrInvalidSecurityGroup, field, name, e.end, e.v)
		}
	}
	if lo > hi {
		return [2]int{}, fmt.Errorf("%w: %s.%sMin %d is greater than %sMax %d", ErrInvalidSecurityGroup, field, name, lo, name, hi)
	}
	return [2]int{lo, hi}, nil
}
