package services

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/edgeovn/edgeovn/agent/subnetcheck"
)

func TestExternalVIPs(t *testing.T) {
	proxy := corev1.LoadBalancerIPModeProxy
	svc := svcFixture(func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.ExternalIPs = []string{"203.0.113.7", "10.42.9.9", "203.0.113.7"}
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.0.2.100"}, {IP: "192.0.2.101", IPMode: &proxy},
			{Hostname: "lb.example"}, {IP: "100.64.0.5"}, {IP: "2001:db8::1"}}
	})
	reserved := append(subnetcheck.Prefixes("the pod network (cluster-cidr)", netip.MustParsePrefix("10.42.0.0/16")),
		subnetcheck.Prefixes("the join network (join-cidr)", netip.MustParsePrefix("100.64.0.0/16"))...)
	got, refused := externalVIPs(svc, reserved)
	want := []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("192.0.2.100"), netip.MustParseAddr("2001:db8::1")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("VIPs %v, want %v (ipMode Proxy, hostnames, repeats and refused ones left out)", got, want)
	}
	wantRefused := []string{"external IP 10.42.9.9: inside the pod network (cluster-cidr) 10.42.0.0/16", "LoadBalancer IP 100.64.0.5: inside the join network (join-cidr) 100.64.0.0/16"}
	if len(refused) != len(wantRefused) {
		t.Fatalf("refused %v, want %v", refused, wantRefused)
	}
	for i, err := range refused {
		if !strings.HasPrefix(err.Error(), wantRefused[i]) || !errors.Is(err, ErrServiceIPRefused) {
			t.Errorf("refusal %d: %v, want %q", i, err, wantRefused[i])
		}
	}
}

// TestExternalVIPsInLoadBalancers: the external addresses are VIPs beside the ClusterIP with
// every endpoint, whatever the traffic policies; with internalTrafficPolicy Local the
// ClusterIP moves to the template load balancer and the external VIPs stay, cluster-wide.
func TestExternalVIPsInLoadBalancers(t *testing.T) {
	yes := new(true)
	slice := sliceFixture(discoveryv1.AddressTypeIPv4, map[string]int32{"http": 8080},
		epFixture{addr: "10.42.0.5", ready: yes}, epFixture{addr: "10.42.1.5", ready: yes})
	ext := []netip.Addr{netip.MustParseAddr("192.0.2.100")}
	backends := []netip.AddrPort{ap("10.42.0.5:8080"), ap("10.42.1.5:8080")}
	svc := svcFixture(func(s *corev1.Service) {
		s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Spec.Ports = s.Spec.Ports[:1]
	})
	lbs := desiredLoadBalancers(svc, []*discoveryv1.EndpointSlice{slice}, ext)
	want := map[netip.AddrPort][]netip.AddrPort{ap("10.43.0.10:80"): backends, ap("192.0.2.100:80"): backends}
	if len(lbs) != 1 || !reflect.DeepEqual(lbs[0].VIPs, want) {
		t.Errorf("load balancers %+v, want one with VIPs %v", lbs, want)
	}
	svc.Spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyLocal)
	lbs = desiredLoadBalancers(svc, []*discoveryv1.EndpointSlice{slice}, ext)
	want = map[netip.AddrPort][]netip.AddrPort{ap("192.0.2.100:80"): backends}
	if len(lbs) != 1 || !reflect.DeepEqual(lbs[0].VIPs, want) {
		t.Errorf("internalTrafficPolicy Local: load balancers %+v, want one with only the external VIP %v", lbs, want)
	}
	if lbs := desiredLoadBalancers(svc, []*discoveryv1.EndpointSlice{slice}, nil); len(lbs) != 0 {
		t.Errorf("internalTrafficPolicy Local without external addresses: %+v, want none", lbs)
	}
}
