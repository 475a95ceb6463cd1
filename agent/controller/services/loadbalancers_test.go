package services

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

func svcFixture(mut ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.43.0.10", ClusterIPs: []string{"10.43.0.10"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}}}
	for _, m := range mut {
		m(s)
	}
	return s
}

type epFixture struct {
	addr               string
	ready, serving, tm *bool
}

func sliceFixture(family discoveryv1.AddressType, ports map[string]int32, eps ...epFixture) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-x",
		Labels: map[string]string{discoveryv1.LabelServiceName: "web"}}, AddressType: family}
	for name, port := range ports {
		proto := corev1.ProtocolTCP
		if name == "dns" {
			proto = corev1.ProtocolUDP
		}
		s.Ports = append(s.Ports, discoveryv1.EndpointPort{Name: new(name), Port: new(port), Protocol: &proto})
	}
	for _, e := range eps {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.addr},
			Conditions: discoveryv1.EndpointConditions{Ready: e.ready, Serving: e.serving, Terminating: e.tm}})
	}
	return s
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestDesiredLoadBalancers(t *testing.T) {
	yes, no := new(true), new(false)
	ports := map[string]int32{"http": 8080, "dns": 5353}
	tests := []struct {
		name   string
		svc    *corev1.Service
		slices []*discoveryv1.EndpointSlice
		want   map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort
		opts   map[string]string
	}{
		{name: "ready endpoints per protocol", svc: svcFixture(),
			slices: []*discoveryv1.EndpointSlice{sliceFixture(discoveryv1.AddressTypeIPv4, ports,
				epFixture{addr: "10.42.0.7"}, epFixture{addr: "10.42.0.5", ready: yes}, epFixture{addr: "10.42.0.9", ready: no})},
			want: map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{
				"tcp": {ap("10.43.0.10:80"): {ap("10.42.0.5:8080"), ap("10.42.0.7:8080")}},
				"udp": {ap("10.43.0.10:53"): {ap("10.42.0.5:5353"), ap("10.42.0.7:5353")}}}},
		{name: "no endpoints: VIP kept without backends, rejects", svc: svcFixture(),
			want: map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{
				"tcp": {ap("10.43.0.10:80"): nil}, "udp": {ap("10.43.0.10:53"): nil}}},
		{name: "serving terminating endpoints only when none is ready", svc: svcFixture(),
			slices: []*discoveryv1.EndpointSlice{sliceFixture(discoveryv1.AddressTypeIPv4, ports,
				epFixture{addr: "10.42.0.5", ready: no, serving: yes, tm: yes}, epFixture{addr: "10.42.0.6", ready: no, serving: no, tm: yes})},
			want: map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{
				"tcp": {ap("10.43.0.10:80"): {ap("10.42.0.5:8080")}}, "udp": {ap("10.43.0.10:53"): {ap("10.42.0.5:5353")}}}},
		{name: "dual stack: each family its own endpoints",
			svc: svcFixture(func(s *corev1.Service) {
				s.Spec.ClusterIPs = []string{"10.43.0.10", "fd00:43::10"}
				s.Spec.Ports = s.Spec.Ports[:1]
			}),
			slices: []*discoveryv1.EndpointSlice{
				sliceFixture(discoveryv1.AddressTypeIPv4, ports, epFixture{addr: "10.42.0.5"}),
				sliceFixture(discoveryv1.AddressTypeIPv6, ports, epFixture{addr: "fd00:42::5"})},
			want: map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{
				"tcp": {ap("10.43.0.10:80"): {ap("10.42.0.5:8080")}, ap("[fd00:43::10]:80"): {ap("[fd00:42::5]:8080")}}}},
		{name: "client IP affinity with its timeout",
			svc: svcFixture(func(s *corev1.Service) {
				s.Spec.Ports = s.Spec.Ports[:1]
				s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
				s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(int32(60))}}
			}),
			want: map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{"tcp": {ap("10.43.0.10:80"): nil}},
			opts: map[string]string{"reject": "true", "event": "false", "affinity_timeout": "60"}},
		{name: "headless: nothing", svc: svcFixture(func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"} })},
		{name: "ExternalName: nothing", svc: svcFixture(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeExternalName })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := desiredLoadBalancers(tt.svc, tt.slices, nil)
			have := map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{}
			for _, lb := range got {
				have[lb.Protocol] = lb.VIPs
				if lb.Owner.Name != "ns/web" || lb.Name != "svc:ns/web:"+string(lb.Protocol) {
					t.Errorf("load balancer %q owned by %v", lb.Name, lb.Owner)
				}
				if err := lb.Validate(); err != nil {
					t.Errorf("invalid spec: %v", err)
				}
				want := tt.opts
				if want == nil {
					want = map[string]string{"reject": "true", "event": "false"}
				}
				if !reflect.DeepEqual(lb.Options, want) {
					t.Errorf("options %v, want %v", lb.Options, want)
				}
			}
			if tt.want == nil {
				tt.want = map[nbdb.LoadBalancerProtocol]map[netip.AddrPort][]netip.AddrPort{}
			}
			if !reflect.DeepEqual(have, tt.want) {
				t.Errorf("load balancers\n got %v\nwant %v", have, tt.want)
			}
		})
	}
}

func TestDesiredLocal(t *testing.T) {
	svc := svcFixture(func(s *corev1.Service) {
		s.Spec.Ports = s.Spec.Ports[:1]
		s.Spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyLocal)
	})
	here, there := "node1", "node2"
	slice := sliceFixture(discoveryv1.AddressTypeIPv4, map[string]int32{"http": 8080}, epFixture{addr: "10.42.0.5"}, epFixture{addr: "10.42.0.6"})
	slice.Endpoints[0].NodeName, slice.Endpoints[1].NodeName = &here, &there
	if lbs := desiredLoadBalancers(svc, []*discoveryv1.EndpointSlice{slice}, nil); len(lbs) != 0 {
		t.Fatalf("internalTrafficPolicy Local also got plain load balancers: %v", lbs)
	}
	lbs, vars := desiredLocal(svc, []*discoveryv1.EndpointSlice{slice}, []string{here, there, "node3"})
	if len(lbs) != 1 || lbs[0].Options["template"] != "true" || lbs[0].Options["address-family"] != "ipv4" || lbs[0].Validate() != nil {
		t.Fatalf("template load balancers = %+v", lbs)
	}
	v := lbs[0].Templates[ap("10.43.0.10:80")]
	want := map[string]map[string]string{here: {v: "10.42.0.5:8080"}, there: {v: "10.42.0.6:8080"}, "node3": {v: ""}}
	if v == "" || !reflect.DeepEqual(vars.Values, want) || !strings.HasPrefix(v, vars.Prefix) {
		t.Fatalf("variables = %v (prefix %s), want %v", vars.Values, vars.Prefix, want)
	}
	plain, none := desiredLocal(svcFixture(), nil, []string{here})
	if len(plain) != 0 || len(none.Values) != 0 || none.Prefix != vars.Prefix {
		t.Fatalf("a Cluster-policy Service wants no variables (but the same prefix, to remove them): %v %+v", plain, none)
	}
}
