package netpol

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// namedPort is a port given by name: it resolves per destination pod.
type namedPort struct {
	proto string // "tcp", "udp", "sctp"
	name  string
}

// rulePorts is a rule's ports list: clauses of numbers and ranges, and named ports.
type rulePorts struct {
	all     bool     // an empty list: every port of every protocol
	numeric []string // OVN match clauses ("tcp.dst == 80")
	named   []namedPort
}

func protocol(p *corev1.Protocol) string {
	if p == nil || *p == "" {
		return "tcp"
	}
	return strings.ToLower(string(*p))
}

// parsePorts reads a rule's ports; an entry edgeovn cannot express is left out and
// reported.
func parsePorts(list []networkingv1.NetworkPolicyPort) (rulePorts, []string) {
	if len(list) == 0 {
		return rulePorts{all: true}, nil
	}
	var out rulePorts
	var problems []string
	for i, p := range list {
		proto := protocol(p.Protocol)
		if proto != "tcp" && proto != "udp" && proto != "sctp" {
			problems = append(problems, fmt.Sprintf("port %d: protocol %q is not TCP, UDP or SCTP: it allows nothing", i, proto))
			continue
		}
		switch {
		case p.Port == nil:
			out.numeric = append(out.numeric, proto)
		case p.Port.Type == intstr.String:
			out.named = append(out.named, namedPort{proto: proto, name: p.Port.StrVal})
		case p.EndPort != nil && *p.EndPort > p.Port.IntVal:
			out.numeric = append(out.numeric, fmt.Sprintf("(%s.dst >= %d && %s.dst <= %d)", proto, p.Port.IntVal, proto, *p.EndPort))
		default:
			out.numeric = append(out.numeric, fmt.Sprintf("%s.dst == %d", proto, p.Port.IntVal))
		}
	}
	slices.Sort(out.numeric)
	out.numeric = slices.Compact(out.numeric)
	return out, problems
}

// clause is the match of the numeric ports, "" when there are none.
func (r rulePorts) clause() string {
	switch len(r.numeric) {
	case 0:
		return ""
	case 1:
		return r.numeric[0]
	}
	return "(" + strings.Join(r.numeric, " || ") + ")"
}

// resolve returns the number the pod gives the named port, or 0.
func (n namedPort) resolve(p Pod) int32 {
	for _, cp := range p.Ports {
		if cp.Name == n.name && protocol(&cp.Protocol) == n.proto {
			return cp.ContainerPort
		}
	}
	return 0
}

// byNumber groups pods by the number the named port resolves to on each, in number order.
func (n namedPort) byNumber(pods []Pod) ([]int32, map[int32][]Pod) {
	groups := map[int32][]Pod{}
	var numbers []int32
	for _, p := range pods {
		num := n.resolve(p)
		if num == 0 {
			continue
		}
		if groups[num] == nil {
			numbers = append(numbers, num)
		}
		groups[num] = append(groups[num], p)
	}
	slices.Sort(numbers)
	return numbers, groups
}
