package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// addIPv6 gives the site router, the site device and each host their IPv6 addresses (nodad:
// usable at once), the router IPv6 forwarding, each host a route to the site device's
// network through the router, and conf (FRR's "router bgp" block) a neighbour per host's
// IPv6 address, activated for IPv6 unicast.
func (w *bgpWorld) addIPv6(ctx context.Context, t *testing.T, conf *strings.Builder) {
	t.Helper()
	steps := [][]string{
		{"sysctl", "-w", "net.ipv6.conf.all.forwarding=1"},
		{"ip", "addr", "add", siteLAN6.String(), "dev", "eth1", "nodad"},
		{"ip", "addr", "add", siteGW6.String(), "dev", "eth0", "nodad"},
	}
	for _, s := range steps {
		if out, err := w.site.InRouter(ctx, s[0], s[1:]...); err != nil {
			t.Fatalf("site router: %v %s", err, out)
		}
	}
	for _, s := range [][]string{{"addr", "add", siteDevice6.String(), "dev", "eth0", "nodad"}, {"-6", "route", "add", "default", "via", siteGW6.Addr().String()}} {
		if out, err := w.site.InDevice(ctx, "ip", s...); err != nil {
			t.Fatalf("site device: %v %s", err, out)
		}
	}
	var af strings.Builder
	for i, e := range w.cl.hosts {
		addr := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0x51, 14: 0, 15: byte(0x11 + i)})
		w.hosts6 = append(w.hosts6, addr)
		for _, s := range [][]string{{"addr", "add", addr.String() + "/64", "dev", harness.SiteNIC, "nodad"},
			{"-6", "route", "add", siteGW6.Masked().String(), "via", siteLAN6.Addr().String()}} {
			if out, err := e.rig.Run(ctx, "ip", s...); err != nil {
				t.Fatalf("%s: %v %s", w.cl.names[i], err, out)
			}
		}
		fmt.Fprintf(conf, " neighbor %s remote-as %d\n neighbor %s timers connect 1\n", addr, bgpClusterAS, addr)
		fmt.Fprintf(&af, "  neighbor %s activate\n", addr)
	}
	fmt.Fprintf(conf, " address-family ipv6 unicast\n%s exit-address-family\n", af.String())
}

// TestBGPIPv6: on an IPv6-only site (an IPv6 neighbour, neighbor-ipv6-address, and no IPv4
// one, no router-id set) a dual-stack Subnet annotated true has its IPv6 CIDR in the router's
// IPv6 RIB with the host's IPv6 address as next hop, a pod annotated local has its /128
// there, and the site device pings the pod and opens TCP to it over IPv6 through the learned
// route. With an IPv4 neighbour added (edgeovn restarted), the IPv4 CIDR goes to the IPv4
// session and the IPv6 prefixes stay on the IPv6 one. The annotation removed, the CIDRs are
// withdrawn and the local pod's /128 stays; the pod deleted, its /128 is withdrawn.
func TestBGPIPv6(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 1, ipv6: true, ipv6Only: true})
	established6 := func() {
		eventually(ctx, t, "bgp session over IPv6", func() bool {
			s, err := w.frr.PeerState(ctx, w.hosts6[0])
			return err == nil && s == "Established"
		})
	}
	established6()
	sn4, sn6 := netip.MustParsePrefix("10.66.0.0/24"), netip.MustParsePrefix("2001:cafe:66::/64")
	w.subnet(ctx, t, "bgp-v6", sn4.String()+","+sn6.String(), bgp.PolicyTrue)
	took := w.waitHops(ctx, t, sn6, w.hosts6[0])
	t.Logf("%s in the router's IPv6 RIB via %s %v after the Subnet was Ready", sn6, w.hosts6[0], took)

	_, sb := w.pod(ctx, t, 0, "web-v6", "bgp-v6", bgp.PolicyLocal)
	ip6 := podIP6(t, sb)
	if !sn6.Contains(ip6) {
		t.Fatalf("pod's IPv6 address %s is not in %s", ip6, sn6)
	}
	host := netip.PrefixFrom(ip6, 128)
	took = w.waitHops(ctx, t, host, w.hosts6[0])
	t.Logf("%s in the router's IPv6 RIB %v after the pod ran", host, took)
	w.reachAddr(ctx, t, ip6, "web-v6", siteDevice6.Addr())
	if st := w.bgpStatus(ctx, t, 0); !strings.Contains(st, "peer "+siteLAN6.Addr().String()+" (as 65001): established") || !strings.Contains(st, host.String()) {
		t.Errorf("status does not show the IPv6 session and the pod's /128:\n%s", st)
	}
	if hops, _ := w.nextHops(ctx, t, sn4); len(hops) != 0 {
		t.Errorf("%s announced via %v with no IPv4 neighbour", sn4, hops)
	}

	// Both families' neighbours: each family's prefixes on its own session.
	w.restart(ctx, t, 0, func() {}, "--neighbor-address="+siteLAN.Addr().String())
	w.established(ctx, t, 0)
	established6()
	w.waitHops(ctx, t, sn4, w.hosts[0])
	w.waitHops(ctx, t, sn6, w.hosts6[0])
	w.waitHops(ctx, t, host, w.hosts6[0])
	w.reachAddr(ctx, t, ip6, "web-v6", siteDevice6.Addr())

	w.annotate(ctx, t, "bgp-v6", "")
	took = w.waitHops(ctx, t, sn6)
	t.Logf("%s withdrawn %v after the annotation was removed", sn6, took)
	w.waitHops(ctx, t, sn4)
	if hops, _ := w.nextHops(ctx, t, host); !slices.Equal(hops, w.hosts6) {
		t.Errorf("the local pod's %s went with the Subnet's annotation: via %v", host, hops)
	}
	pod, err := w.cl.c.Central.Kube().CoreV1().Pods("default").Get(ctx, "web-v6", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cl.hosts[0].kubelet.DeletePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
	took = w.waitHops(ctx, t, host)
	t.Logf("%s withdrawn %v after the pod was deleted", host, took)
}
