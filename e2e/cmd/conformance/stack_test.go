package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestParseStack: single (the default) and dual are known, anything else is an error naming
// the flag and the value.
func TestParseStack(t *testing.T) {
	for in, want := range map[string]string{"": "single", "single": "single", "dual": "dual"} {
		s, err := parseStack(in)
		if err != nil || s.name != want {
			t.Errorf("parseStack(%q) = %q, %v; want %q", in, s.name, err, want)
		}
	}
	if _, err := parseStack("ipv6"); err == nil || !strings.Contains(err.Error(), "-stack") || !strings.Contains(err.Error(), `"ipv6"`) {
		t.Errorf("parseStack(ipv6): %v, want an error naming -stack and the value", err)
	}
}

// TestStackFlags: a single-stack cluster gets no flag beyond the rig's defaults; a dual-stack
// one gets k3s's ranges, IPv4 first, in each part's own flag (edgeovn, kubelet node IPs,
// the controller manager's node IPAM, kube-proxy) and kube-dns a ClusterIP of each family
// inside its service range.
func TestStackFlags(t *testing.T) {
	v4, v6 := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8:2::10")
	s := singleStack
	if s.dual() || s.edgeovnFlags() != nil || s.kubeletFlags(v4, v6) != nil || s.controllerManagerFlags() != nil || s.kubeProxyFlags() != nil {
		t.Errorf("single stack has dual-stack flags")
	}
	d := dualStack
	if !d.dual() {
		t.Fatal("dual stack is not dual")
	}
	for _, c := range []struct {
		part string
		got  []string
		want []string
	}{
		{"edgeovn", d.edgeovnFlags(), []string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--service-cidr=10.43.0.0/16,2001:cafe:43::/112"}},
		{"kubelet", d.kubeletFlags(v4, v6), []string{"--node-ip=192.0.2.10,2001:db8:2::10"}},
		{"kube-proxy", d.kubeProxyFlags(), []string{"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56"}},
		{"kube-controller-manager", d.controllerManagerFlags(), []string{"--allocate-node-cidrs=true",
			"--cluster-cidr=10.42.0.0/16,2001:cafe:42::/56", "--service-cluster-ip-range=10.43.0.0/16,2001:cafe:43::/112",
			"--node-cidr-mask-size-ipv4=24", "--node-cidr-mask-size-ipv6=64"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s flags %q, want %q", c.part, c.got, c.want)
		}
	}
	for i, ip := range d.dns {
		if !d.serviceCIDRs[i].Contains(ip) {
			t.Errorf("kube-dns ClusterIP %s outside service range %s", ip, d.serviceCIDRs[i])
		}
	}
}

// TestDualStackFocus: the [Feature:IPv6DualStack] specs are selected on a dual-stack cluster
// only (on an IPv4 one they would fail for want of a second family), beside the rest; the
// SCTP one among them is skipped with its reason; a -specs file naming one is accepted on a
// dual-stack cluster and refused on a single-stack one.
func TestDualStackFocus(t *testing.T) {
	ds := "[sig-network] [Feature:IPv6DualStack] should create service with ipv6,v4 cluster ip"
	dns := "[sig-network] DNS should provide DNS for services  [Conformance]"
	if selected(singleStack, ds) || !selected(dualStack, ds) {
		t.Errorf("dual-stack spec selected on single %v, on dual %v; want false, true", selected(singleStack, ds), selected(dualStack, ds))
	}
	if !selected(dualStack, dns) || !regexpMatch(t, narrowed(dualStack, ""), ds) {
		t.Errorf("dual-stack focus %q drops the Conformance specs or lacks the dual-stack ones", narrowed(dualStack, ""))
	}
	sctp := "[sig-network] [Feature:IPv6DualStack] Granular Checks: Services Secondary IP Family [LinuxOnly] should function for pod-Service: sctp [Feature:SCTPConnectivity]"
	if !regexpMatch(t, skip(0), sctp) || skipReason(sctp) == "" {
		t.Errorf("the dual-stack SCTP spec is not skipped with a reason")
	}
	name := strings.TrimPrefix(ds, "[sig-network] ")
	if _, err := focusOf(strings.NewReader(name), dualStack); err != nil {
		t.Errorf("-specs on a dual-stack cluster: %v", err)
	}
	if _, err := focusOf(strings.NewReader(name), singleStack); err == nil || !strings.Contains(err.Error(), "single-stack") {
		t.Errorf("-specs of a dual-stack spec on a single-stack cluster: %v, want an error naming the stack", err)
	}
}

// TestDualStackGranularSkipped: the Secondary IP Family granular checks, which the framework
// skips on one node only after building their pods, are skipped up front with that reason.
func TestDualStackGranularSkipped(t *testing.T) {
	name := "[sig-network] [Feature:IPv6DualStack] Granular Checks: Services Secondary IP Family [LinuxOnly] should function for pod-Service: http"
	if !regexpMatch(t, skip(0), name) || !strings.Contains(skipReason(name), "two nodes") {
		t.Errorf("%q: skipped %v, reason %q", name, regexpMatch(t, skip(0), name), skipReason(name))
	}
	if regexpMatch(t, skip(0), "[sig-network] [Feature:IPv6DualStack] should be able to reach pod on ipv4 and ipv6 ip") {
		t.Error("a one-node dual-stack spec is skipped")
	}
}

// TestNumNodesLiftsSkip: told two nodes (-num-nodes 2), the run no longer skips the checks
// that skip only for want of a second node, and still skips SCTP and [Disruptive].
func TestNumNodesLiftsSkip(t *testing.T) {
	granular := "[sig-network] [Feature:IPv6DualStack] Granular Checks: Services Secondary IP Family [LinuxOnly] should update endpoints: udp"
	sctp := "[sig-network] [Feature:IPv6DualStack] Granular Checks: Services Secondary IP Family [LinuxOnly] should function for pod-Service: sctp [Feature:SCTPConnectivity]"
	if regexpMatch(t, skip(2), granular) {
		t.Errorf("-num-nodes 2 still skips %q", granular)
	}
	if !regexpMatch(t, skip(1), granular) {
		t.Errorf("-num-nodes 1 runs %q", granular)
	}
	if !regexpMatch(t, skip(2), sctp) || !regexpMatch(t, skip(2), "[sig-apps] Foo [Disruptive]") {
		t.Error("-num-nodes 2 lifts the SCTP or [Disruptive] skip")
	}
}
