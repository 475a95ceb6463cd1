package node

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/node/hostnet"
)

func TestNodePorts(t *testing.T) {
	svc := func(name string, typ corev1.ServiceType, etp corev1.ServiceExternalTrafficPolicy) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Type: typ, ClusterIP: "10.43.0.7", ClusterIPs: []string{"10.43.0.7"}, ExternalTrafficPolicy: etp,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
					{Name: "dns", Port: 53, NodePort: 30053, Protocol: corev1.ProtocolUDP}}}}
	}
	here, there := "node1", "node2"
	slice := &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4,
		Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.42.0.9"}, NodeName: &here},
			{Addresses: []string{"10.42.0.8"}, NodeName: &there},
			{Addresses: []string{"10.42.0.7"}, NodeName: &here, Conditions: discoveryv1.EndpointConditions{Ready: new(false)}},
			{Addresses: []string{"10.42.0.5"}, NodeName: &here},
		}}
	slicesOf := func(*corev1.Service) []*discoveryv1.EndpointSlice { return []*discoveryv1.EndpointSlice{slice} }

	got := nodePorts(here, []*corev1.Service{
		svc("cluster", corev1.ServiceTypeNodePort, corev1.ServiceExternalTrafficPolicyCluster),
		svc("plain", corev1.ServiceTypeClusterIP, ""),
	}, slicesOf, nil)
	want := []hostnet.NodePort{
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("10.43.0.7:80")},
		{Protocol: "udp", Port: 30053, ClusterIP: netip.MustParseAddrPort("10.43.0.7:53")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Cluster policy: got %+v\nwant %+v", got, want)
	}

	got = nodePorts(here, []*corev1.Service{svc("local", corev1.ServiceTypeLoadBalancer, corev1.ServiceExternalTrafficPolicyLocal)}, slicesOf, nil)
	want = []hostnet.NodePort{
		{Protocol: "tcp", Port: 30080, LocalOnly: true, Local: []netip.AddrPort{netip.MustParseAddrPort("10.42.0.5:8080"), netip.MustParseAddrPort("10.42.0.9:8080")}},
		{Protocol: "udp", Port: 30053, LocalOnly: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Local policy: got %+v\nwant %+v", got, want)
	}
}

// TestNodePortsDualStack: a dual-stack Service's node port is served once per family on that
// family's ClusterIP (or, Local, that family's endpoints on this node); an IPv6-only Service
// on its IPv6 ClusterIP alone.
func TestNodePortsDualStack(t *testing.T) {
	here := "node1"
	svc := func(name string, etp corev1.ServiceExternalTrafficPolicy, ips ...string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: ips[0], ClusterIPs: ips, ExternalTrafficPolicy: etp,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}}}
	}
	slices := []*discoveryv1.EndpointSlice{
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.42.0.9"}, NodeName: &here}}},
		{AddressType: discoveryv1.AddressTypeIPv6, Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8080))}},
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"2001:cafe:42::9"}, NodeName: &here}}},
	}
	slicesOf := func(*corev1.Service) []*discoveryv1.EndpointSlice { return slices }

	// The API server lists the primary family first: IPv6 first here, served all the same.
	got := nodePorts(here, []*corev1.Service{svc("dual", "", "2001:cafe:43::7", "10.43.0.7")}, slicesOf, nil)
	want := []hostnet.NodePort{
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("10.43.0.7:80")},
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("[2001:cafe:43::7]:80"), IPv6: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dual stack, Cluster: got %+v\nwant %+v", got, want)
	}
	got = nodePorts(here, []*corev1.Service{svc("v6", corev1.ServiceExternalTrafficPolicyLocal, "2001:cafe:43::8")}, slicesOf, nil)
	want = []hostnet.NodePort{{Protocol: "tcp", Port: 30080, LocalOnly: true, IPv6: true,
		Local: []netip.AddrPort{netip.MustParseAddrPort("[2001:cafe:42::9]:8080")}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("IPv6 only, Local: got %+v\nwant %+v", got, want)
	}
}

// TestNodePortsHostEndpoints: a Cluster node port whose ready endpoints of the family are all
// the host's own addresses (hostNetwork pods here) lists them to be reached directly; one
// with an endpoint elsewhere (a pod, another host) keeps going through the ClusterIP alone.
func TestNodePortsHostEndpoints(t *testing.T) {
	here, there := "node1", "node2"
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hostnet"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, ClusterIP: "10.43.0.7", ClusterIPs: []string{"10.43.0.7", "2001:cafe:43::7"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}}}
	slice := func(family discoveryv1.AddressType, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{AddressType: family, Ports: []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8083))}}, Endpoints: eps}
	}
	host := map[netip.Addr]bool{netip.MustParseAddr("192.0.2.10"): true, netip.MustParseAddr("2001:db8:2::10"): true}
	onlyHost := []*discoveryv1.EndpointSlice{
		slice(discoveryv1.AddressTypeIPv4, discoveryv1.Endpoint{Addresses: []string{"192.0.2.10"}, NodeName: &here}),
		slice(discoveryv1.AddressTypeIPv6, discoveryv1.Endpoint{Addresses: []string{"2001:db8:2::10"}, NodeName: &here}),
	}
	got := nodePorts(here, []*corev1.Service{svc}, func(*corev1.Service) []*discoveryv1.EndpointSlice { return onlyHost }, host)
	want := []hostnet.NodePort{
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("10.43.0.7:80"), Local: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.10:8083")}},
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("[2001:cafe:43::7]:80"), Local: []netip.AddrPort{netip.MustParseAddrPort("[2001:db8:2::10]:8083")}, IPv6: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host endpoints only: got %+v\nwant %+v", got, want)
	}
	mixed := []*discoveryv1.EndpointSlice{
		slice(discoveryv1.AddressTypeIPv4, discoveryv1.Endpoint{Addresses: []string{"192.0.2.10"}, NodeName: &here},
			discoveryv1.Endpoint{Addresses: []string{"10.42.1.5"}, NodeName: &there}),
	}
	got = nodePorts(here, []*corev1.Service{svc}, func(*corev1.Service) []*discoveryv1.EndpointSlice { return mixed }, host)
	want = []hostnet.NodePort{
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("10.43.0.7:80")},
		{Protocol: "tcp", Port: 30080, ClusterIP: netip.MustParseAddrPort("[2001:cafe:43::7]:80"), IPv6: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("an endpoint elsewhere: got %+v\nwant %+v", got, want)
	}
}

// TestHostClusterIPs: a ClusterIP port whose ready endpoints of the family are all the host's
// own addresses is listed for the host to reach directly, per family; one with an endpoint
// elsewhere, or none, is not.
func TestHostClusterIPs(t *testing.T) {
	here := "node1"
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hostnet"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.43.0.7", ClusterIPs: []string{"10.43.0.7", "2001:cafe:43::7"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}
	port := []discoveryv1.EndpointPort{{Name: new("http"), Port: new(int32(8083))}}
	slices := []*discoveryv1.EndpointSlice{
		{AddressType: discoveryv1.AddressTypeIPv4, Ports: port, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.10"}, NodeName: &here}}},
		{AddressType: discoveryv1.AddressTypeIPv6, Ports: port, Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"2001:cafe:42::9"}, NodeName: &here}}},
	}
	host := map[netip.Addr]bool{netip.MustParseAddr("192.0.2.10"): true, netip.MustParseAddr("2001:db8:2::10"): true}
	got := hostClusterIPs([]*corev1.Service{svc}, func(*corev1.Service) []*discoveryv1.EndpointSlice { return slices }, host)
	vip := netip.MustParseAddrPort("10.43.0.7:80")
	want := []hostnet.ServiceIP{{Protocol: "tcp", IP: vip, ClusterIP: vip, Local: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.10:8083")}, LocalOnly: true, Host: true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v (the IPv6 endpoint is a pod: through OVN as before)", got, want)
	}
	if got := hostClusterIPs([]*corev1.Service{svc}, func(*corev1.Service) []*discoveryv1.EndpointSlice { return nil }, host); len(got) != 0 {
		t.Errorf("no endpoints: got %+v, want none", got)
	}
}
