package node

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
)

func TestServiceIPs(t *testing.T) {
	here := "node1"
	proxy := corev1.LoadBalancerIPModeProxy
	svc := func(name string, etp corev1.ServiceExternalTrafficPolicy, external []string, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.43.0.7", ClusterIPs: []string{"10.43.0.7"},
				ExternalTrafficPolicy: etp, ExternalIPs: external,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}}
	}
	slice := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
		Ports:     []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.42.0.9"}, NodeName: &here}}}
	slicesOf := func(*corev1.Service) []*discoveryv1.EndpointSlice { return []*discoveryv1.EndpointSlice{slice} }
	cip := netip.MustParseAddrPort("10.43.0.7:80")

	got, refused := serviceIPs(serviceIPsRequest{Node: here, Slices: slicesOf, Services: []*corev1.Service{
		svc("cluster", corev1.ServiceExternalTrafficPolicyCluster, []string{"203.0.113.7", "2001:db8::7"},
			corev1.LoadBalancerIngress{IP: "192.0.2.100"}, corev1.LoadBalancerIngress{IP: "192.0.2.101", IPMode: &proxy},
			corev1.LoadBalancerIngress{Hostname: "lb.example"}, corev1.LoadBalancerIngress{IP: "203.0.113.7"}),
		svc("local", corev1.ServiceExternalTrafficPolicyLocal, nil, corev1.LoadBalancerIngress{IP: "192.0.2.102"}),
	}})
	want := []hostnet.ServiceIP{
		{Protocol: "tcp", IP: netip.MustParseAddrPort("192.0.2.100:80"), ClusterIP: cip},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("192.0.2.102:80"), ClusterIP: cip, LocalOnly: true,
			Local: []netip.AddrPort{netip.MustParseAddrPort("10.42.0.9:8080")}},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:80"), ClusterIP: cip},
	}
	if !reflect.DeepEqual(got, want) || len(refused) != 0 {
		t.Errorf("got %+v (refused %v)\nwant %+v (ipMode Proxy, hostname-only, IPv6 and repeated addresses left out)", got, refused, want)
	}
}

// TestServiceIPsSourceRanges: the source ranges restrict the LoadBalancer IPs only (kube-proxy
// leaves external IPs open), to the IPv4 entries that parse; an entry that does not parse
// leaves the rest in force.
func TestServiceIPsSourceRanges(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lb"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.43.0.7", ExternalIPs: []string{"203.0.113.7"},
			LoadBalancerSourceRanges: []string{"192.0.2.0/24", "2001:db8::/32", "010.1.0.0/16"},
			Ports:                    []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "198.51.100.9"}}}}}
	got, _ := serviceIPs(serviceIPsRequest{Node: "node1", Services: []*corev1.Service{svc},
		Slices: func(*corev1.Service) []*discoveryv1.EndpointSlice { return nil }})
	cip := netip.MustParseAddrPort("10.43.0.7:80")
	want := []hostnet.ServiceIP{
		{Protocol: "tcp", IP: netip.MustParseAddrPort("198.51.100.9:80"), ClusterIP: cip, Restricted: true,
			AllowFrom: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}},
		{Protocol: "tcp", IP: netip.MustParseAddrPort("203.0.113.7:80"), ClusterIP: cip},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestServiceIPGuard: addresses in the cluster's networks, and the host's own address on a
// port a host listener holds, are refused for their Service, naming the address and why;
// the other Services' addresses are served.
func TestServiceIPGuard(t *testing.T) {
	g := ipGuard{
		reserved:  []namedPrefix{{"pod network (cluster-cidr)", netip.MustParsePrefix("10.42.0.0/16")}, {"join network", netip.MustParsePrefix("100.64.0.0/16")}},
		hostAddrs: map[netip.Addr]bool{netip.MustParseAddr("192.0.2.10"): true},
		listening: map[string]map[netip.AddrPort]bool{"tcp": {netip.MustParseAddrPort("0.0.0.0:22"): true}, "udp": {}},
	}
	mk := func(name string, port int32, external ...string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.43.0.7", ExternalIPs: external,
				Ports: []corev1.ServicePort{{Port: port, Protocol: corev1.ProtocolTCP}}}}
	}
	lb := mk("lb-in-pods", 80)
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "10.42.3.4"}}
	got, refused := serviceIPs(serviceIPsRequest{Node: "n", Refuse: g.refuse, Slices: func(*corev1.Service) []*discoveryv1.EndpointSlice { return nil },
		Services: []*corev1.Service{mk("ssh", 22, "192.0.2.10"), lb, mk("join", 80, "100.64.0.9"), mk("ok", 80, "192.0.2.10", "203.0.113.7")}})
	if len(got) != 2 || got[0].IP.String() != "192.0.2.10:80" || got[1].IP.String() != "203.0.113.7:80" {
		t.Errorf("served %+v, want only ns/ok's 192.0.2.10:80 and 203.0.113.7:80", got)
	}
	wantMsg := map[string]string{
		"ssh":        "external IP 192.0.2.10: this host's own address, and tcp port 22 is taken (0.0.0.0:22): held by a listener on the host",
		"lb-in-pods": "LoadBalancer IP 10.42.3.4: inside the pod network (cluster-cidr) 10.42.0.0/16",
		"join":       "external IP 100.64.0.9: inside the join network 100.64.0.0/16",
	}
	if len(refused) != len(wantMsg) {
		t.Fatalf("refused %v, want %d", refused, len(wantMsg))
	}
	for _, r := range refused {
		if !strings.Contains(r.Err.Error(), wantMsg[r.Service.Name]) || !errors.Is(r.Err, errServiceIP) || errors.Is(r.Err, errHostListener) != (r.Service.Name == "ssh") {
			t.Errorf("%s refused with %q, want it to say %q", r.Service.Name, r.Err, wantMsg[r.Service.Name])
		}
	}
}

// TestDiagLocal: an inet_diag_msg's local address as the guard compares it.
func TestDiagLocal(t *testing.T) {
	msg := func(family byte, port uint16, addr netip.Addr) []byte {
		m := make([]byte, sizeofDiagMsg)
		m[0] = family
		binary.BigEndian.PutUint16(m[4:6], port)
		copy(m[8:24], addr.AsSlice())
		return m
	}
	for _, c := range []struct {
		m    []byte
		want string
	}{
		{msg(unix.AF_INET, 22, netip.MustParseAddr("0.0.0.0")), "0.0.0.0:22"},
		{msg(unix.AF_INET, 8080, netip.MustParseAddr("192.0.2.10")), "192.0.2.10:8080"},
		{msg(unix.AF_INET6, 22, netip.MustParseAddr("::")), "0.0.0.0:22"},
		{msg(unix.AF_INET6, 53, netip.MustParseAddr("::ffff:127.0.0.1")), "127.0.0.1:53"},
		{msg(unix.AF_INET6, 53, netip.MustParseAddr("2001:db8::1")), ""},
		{msg(unix.AF_INET, 53, netip.MustParseAddr("127.0.0.1"))[:40], ""},
	} {
		got, ok := diagLocal(c.m)
		if c.want == "" && ok || c.want != "" && (!ok || got.String() != c.want) {
			t.Errorf("diagLocal(family %d, %x) = %v %v, want %q", c.m[0], c.m[8:24], got, ok, c.want)
		}
	}
}

// TestHealthChecks: only Local LoadBalancer Services with a healthCheckNodePort get one,
// counting this node's distinct ready addresses (two ports of one address count once).
func TestHealthChecks(t *testing.T) {
	here, there := "node1", "node2"
	mk := func(name string, typ corev1.ServiceType, etp corev1.ServiceExternalTrafficPolicy, hc int32) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Type: typ, ExternalTrafficPolicy: etp, HealthCheckNodePort: hc}}
	}
	slice := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}, {Name: new("dns"), Port: new(int32(53))}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.42.0.9"}, NodeName: &here},
			{Addresses: []string{"10.42.0.8"}, NodeName: &there},
			{Addresses: []string{"10.42.0.7"}, NodeName: &here, Conditions: discoveryv1.EndpointConditions{Ready: new(false)}},
		}}
	got := healthChecks(here, []*corev1.Service{
		mk("local", corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal, 31000),
		mk("cluster", corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyCluster, 0),
		mk("nodeport", corev1.ServiceTypeNodePort, corev1.ServiceExternalTrafficPolicyLocal, 0),
	}, func(*corev1.Service) []*discoveryv1.EndpointSlice { return []*discoveryv1.EndpointSlice{slice, slice} })
	if len(got) != 1 || got[0].Name != "local" || got[0].Port != 31000 || got[0].LocalEndpoints != 1 {
		t.Errorf("health checks %+v, want ns/local on 31000 with 1 local endpoint", got)
	}
}
