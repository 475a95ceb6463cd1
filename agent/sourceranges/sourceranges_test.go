package sourceranges

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestOf(t *testing.T) {
	lb := func(ranges []string, ann string) *corev1.Service {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, LoadBalancerSourceRanges: ranges}}
		if ann != "" {
			svc.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{Annotation: ann}}
		}
		return svc
	}
	pfx := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	for _, c := range []struct {
		name       string
		svc        *corev1.Service
		restricted bool
		want       []netip.Prefix
		v4         []netip.Prefix
		bad        []string // each bad error names this
	}{
		{name: "none", svc: lb(nil, "")},
		{name: "not a LoadBalancer", svc: &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, LoadBalancerSourceRanges: []string{"10.0.0.0/8"}}}},
		{name: "field, host bits cleared, spaces, duplicates", svc: lb([]string{" 192.0.2.1/24", "192.0.2.0/24", "198.51.100.7/32", "2001:db8::1/64"}, ""),
			restricted: true, want: pfx("192.0.2.0/24", "198.51.100.7/32", "2001:db8::/64"), v4: pfx("192.0.2.0/24", "198.51.100.7/32")},
		{name: "annotation when the field is empty", svc: lb(nil, "10.1.0.0/16, 10.2.0.0/16"), restricted: true,
			want: pfx("10.1.0.0/16", "10.2.0.0/16"), v4: pfx("10.1.0.0/16", "10.2.0.0/16")},
		{name: "field wins over the annotation", svc: lb([]string{"10.9.0.0/16"}, "10.1.0.0/16"), restricted: true,
			want: pfx("10.9.0.0/16"), v4: pfx("10.9.0.0/16")},
		{name: "IPv4-mapped", svc: lb([]string{"::ffff:10.3.0.0/112"}, ""), restricted: true, want: pfx("10.3.0.0/16"), v4: pfx("10.3.0.0/16")},
		{name: "bad entries left out, the rest kept", svc: lb([]string{"192.0.2.1/32", "010.9.0.0/16", "site-lan"}, ""), restricted: true,
			want: pfx("192.0.2.1/32"), v4: pfx("192.0.2.1/32"), bad: []string{`spec.loadBalancerSourceRanges entry "010.9.0.0/16"`, `entry "site-lan"`}},
		{name: "only bad entries: still restricted, nothing admitted", svc: lb(nil, "10.0.0.0/33"), restricted: true,
			bad: []string{`annotation ` + Annotation + ` entry "10.0.0.0/33"`}},
		{name: "only IPv6: no IPv4 client admitted", svc: lb([]string{"2001:db8::/32"}, ""), restricted: true, want: pfx("2001:db8::/32")},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Of(c.svc)
			if r.Restricted != c.restricted || !slices.Equal(r.Prefixes, c.want) || !slices.Equal(r.IPv4(), c.v4) {
				t.Errorf("Of = %+v (IPv4 %v), want restricted %v, %v (IPv4 %v)", r, r.IPv4(), c.restricted, c.want, c.v4)
			}
			if len(r.Bad) != len(c.bad) {
				t.Fatalf("bad = %v, want %d naming %q", r.Bad, len(c.bad), c.bad)
			}
			for i, err := range r.Bad {
				if !errors.Is(err, ErrBadRange) || !strings.Contains(err.Error(), c.bad[i]) {
					t.Errorf("bad[%d] = %v, want ErrBadRange naming %q", i, err, c.bad[i])
				}
			}
		})
	}
}
