package services

import (
	"log/slog"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

// TestPodVIPsSourceRanges: a LoadBalancer IP whose source ranges leave a pod network out is
// not a VIP for pods (their traffic goes to the host's filter); one whose ranges cover the
// pod networks is; external IPs and unrestricted Services are untouched.
func TestPodVIPsSourceRanges(t *testing.T) {
	pods := []netip.Prefix{netip.MustParsePrefix("10.42.0.0/16"), netip.MustParsePrefix("fd00:10:42::/64")}
	lbIP, extIP, lbIP6 := netip.MustParseAddr("192.0.2.100"), netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::100")
	vips := []netip.Addr{extIP, lbIP, lbIP6}
	for _, c := range []struct {
		name   string
		ranges []string
		want   []netip.Addr
	}{
		{"no ranges", nil, vips},
		{"site only", []string{"192.0.2.0/24", "2001:db8::/32"}, []netip.Addr{extIP}},
		{"pod network covered (IPv4)", []string{"192.0.2.0/24", "10.0.0.0/8"}, []netip.Addr{extIP, lbIP}},
		{"part of the pod network", []string{"10.42.0.0/24"}, []netip.Addr{extIP}},
		{"both families covered", []string{"0.0.0.0/0", "fd00:10:42::/48"}, vips},
		{"only bad entries", []string{"site"}, []netip.Addr{extIP}},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := svcFixture(func(s *corev1.Service) {
				s.Spec.Type, s.Spec.ExternalIPs, s.Spec.LoadBalancerSourceRanges = corev1.ServiceTypeLoadBalancer, []string{extIP.String()}, c.ranges
			})
			if got := podVIPs(svc, vips, pods); !reflect.DeepEqual(got, c.want) {
				t.Errorf("podVIPs = %v, want %v", got, c.want)
			}
		})
	}
}

// TestReportSourceRangeInvalid: an entry that does not parse is a SourceRangeInvalid Warning
// naming it, once while it stays; a refused address keeps its own reason.
func TestReportSourceRangeInvalid(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	s := New(Request{Log: slog.New(slog.DiscardHandler), Events: rec,
		Reserved: subnetcheck.Prefixes("the pod network (cluster-cidr)", netip.MustParsePrefix("10.42.0.0/16"))})
	svc := svcFixture(func(s *corev1.Service) {
		s.Spec.Type, s.Spec.LoadBalancerSourceRanges = corev1.ServiceTypeLoadBalancer, []string{"192.0.2.0/24", "010.9.0.0/16"}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "10.42.0.9"}}
	})
	for range 2 {
		if got := s.servedExternal(svc); len(got) != 0 {
			t.Errorf("served %v, want none (the only LoadBalancer IP is refused)", got)
		}
	}
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "Warning ServiceIPRefused LoadBalancer IP 10.42.0.9") ||
		!strings.HasPrefix(got[1], `Warning SourceRangeInvalid spec.loadBalancerSourceRanges entry "010.9.0.0/16"`) {
		t.Errorf("events %q, want one ServiceIPRefused and one SourceRangeInvalid naming the entry", got)
	}
}
