package server

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// ipamServer is a Server over fakes with one pod port (another pod's primary) on br-int.
func ipamServer(t *testing.T, providers SubnetProviders) (*Server, *fakePods, *fakePorts) {
	t.Helper()
	pods := &fakePods{}
	ports := &fakePorts{}
	_ = ports.AddPort(context.Background(), PortRequest{Name: "other_h", IfaceID: "other.default",
		ExternalIDs: map[string]string{ExtIDContainerID: "other", ExtIDIfName: "eth0"}})
	s, err := New(Config{Pods: pods, Ports: ports, Timeout: time.Second, SubnetProviders: providers})
	if err != nil {
		t.Fatal(err)
	}
	return s, pods, ports
}

func ipamReq(command, provider string) protocol.PodRequest {
	return protocol.PodRequest{Command: command, ContainerID: "c1", Netns: "/var/run/netns/x", IfName: "net1",
		PodNamespace: "default", PodName: "web", Provider: provider, IPAMOnly: true}
}

// TestIPAMAdd: an IPAM ADD answers the pod's allocation of the provider (addresses with their
// gateway, its routes, no default route, no interface) and wires nothing.
func TestIPAMAdd(t *testing.T) {
	s, pods, ports := ipamServer(t, func(string) (bool, bool) { return true, true })
	pods.setAttachment("default", "web", "mv.default", attachNetwork(7, "mv.default"))
	resp := s.serve(context.Background(), ipamReq(protocol.CommandAdd, "mv.default"))
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	a := resp.Add
	if len(a.IPs) != 1 || a.IPs[0].Address != netip.MustParsePrefix("172.17.0.7/24") || a.IPs[0].Gateway != netip.MustParseAddr("172.17.0.1") {
		t.Errorf("ips %+v, want 172.17.0.7/24 gw 172.17.0.1", a.IPs)
	}
	if len(a.Routes) != 1 || a.Routes[0].Dst != netip.MustParsePrefix("192.168.0.0/16") {
		t.Errorf("routes %+v, want the routes annotation's only", a.Routes)
	}
	if a.HostInterface.Name != "" || a.PodInterface.Name != "" {
		t.Errorf("interfaces %+v %+v, want none", a.HostInterface, a.PodInterface)
	}
	if l, _ := ports.ListPorts(context.Background()); len(l) != 1 {
		t.Errorf("br-int ports %v, want only the other pod's", l)
	}
}

// TestIPAMBadInput: a provider no Subnet has fails at once (no wait), and a missing or OVN
// provider is refused; each names ipam.provider.
func TestIPAMBadInput(t *testing.T) {
	s, pods, _ := ipamServer(t, func(p string) (bool, bool) { return p == "mv.default", true })
	tests := []struct{ provider, want string }{
		{"orphan.default", "ipam.provider orphan.default: no Subnet has spec.provider orphan.default"},
		{"", `ipam.provider "": want an IPAM-only provider`},
		{"a.default.ovn", `ipam.provider "a.default.ovn"`},
	}
	for _, tt := range tests {
		start := time.Now()
		resp := s.serve(context.Background(), ipamReq(protocol.CommandAdd, tt.provider))
		if resp.Error == nil || resp.Error.Code != protocol.CodeInvalidNetworkConfig || !strings.Contains(resp.Error.Msg, tt.want) {
			t.Errorf("provider %q: error %+v, want code 7 naming %q", tt.provider, resp.Error, tt.want)
		}
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("provider %q: answered after %v, want at once", tt.provider, took)
		}
	}
	if n := pods.callCount(); n != 0 {
		t.Errorf("%d waits for an allocation, want none", n)
	}
}

// TestIPAMDelGCKeepPorts: the IPAM DEL and a GC of the calling plugin's network (whose valid
// attachments name none of the pods' primary interfaces) remove no pod port.
func TestIPAMDelGCKeepPorts(t *testing.T) {
	s, _, ports := ipamServer(t, nil)
	for _, cmd := range []string{protocol.CommandDel, protocol.CommandCheck, protocol.CommandGC} {
		if resp := s.serve(context.Background(), ipamReq(cmd, "mv.default")); resp.Error != nil {
			t.Fatalf("%s: %v", cmd, resp.Error)
		}
	}
	if _, ok := ports.get("other_h"); !ok || len(ports.deleted) != 0 {
		t.Errorf("ports deleted %v, want none", ports.deleted)
	}
}
