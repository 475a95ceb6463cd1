package sourceranges

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Annotation is the pre-field way of giving the ranges, still honoured by kube-proxy when
// spec.loadBalancerSourceRanges is empty.
const Annotation = "service.beta.kubernetes.io/load-balancer-source-ranges"

// ErrBadRange is what every refused entry wraps.
var ErrBadRange = errors.New("not a CIDR")

// Ranges are the networks a Service's LoadBalancer IPs admit clients from.
type Ranges struct {
	// Restricted: the Service gives source ranges, so only clients in Prefixes reach its
	// LoadBalancer IPs (none at all when no entry of the family is usable).
	Restricted bool
	// Prefixes are the parsed entries, host bits cleared (kube-proxy masks them too), each once.
	Prefixes []netip.Prefix
	// Bad are the entries that do not parse, each naming its entry and where it was given.
	Bad []error
}

// Of reads svc's ranges. Only LoadBalancer Services have any (the API server refuses them
// on other types).
func Of(svc *corev1.Service) Ranges {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return Ranges{}
	}
	raw, field := svc.Spec.LoadBalancerSourceRanges, "spec.loadBalancerSourceRanges"
	if len(raw) == 0 {
		v, ok := svc.Annotations[Annotation]
		if !ok || strings.TrimSpace(v) == "" {
			return Ranges{}
		}
		raw, field = strings.Split(v, ","), "annotation "+Annotation
	}
	r := Ranges{Restricted: true}
	for _, s := range raw {
		p, err := parse(s)
		if err != nil {
			r.Bad = append(r.Bad, fmt.Errorf("%s entry %q: %w (%v)", field, s, ErrBadRange, err))
			continue
		}
		if !slices.Contains(r.Prefixes, p) {
			r.Prefixes = append(r.Prefixes, p)
		}
	}
	return r
}

// IPv4 are the IPv4 prefixes.
func (r Ranges) IPv4() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range r.Prefixes {
		if p.Addr().Is4() {
			out = append(out, p)
		}
	}
	return out
}

// parse reads one entry: spaces around it ignored, host bits cleared, an IPv4-mapped IPv6
// prefix taken as the IPv4 one it maps.
func parse(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, err
	}
	if a := p.Addr(); a.Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("IPv4-mapped prefix shorter than /96")
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}
