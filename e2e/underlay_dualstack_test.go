package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The site's far network over IPv6, which the hosts reach through the site router (siteLAN6,
// site6_test.go).
var siteFar6 = netip.MustParseAddr("2001:db8:18::1")

const siteFar6Net = "2001:db8:18::/48"

const dualUnderlaySubnet = "apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: under\nspec:\n" +
	"  cidrBlock: 192.0.2.0/24,2001:db8:2::/64\n  gateway: 192.0.2.1,2001:db8:2::1\n  vlan: v100\n" +
	"  excludeIps: [192.0.2.2..192.0.2.9, 192.0.2.200, 2001:db8:2::2..2001:db8:2::9, 2001:db8:2::200]\n"

// TestUnderlayDualStack: in a dual-stack cluster, a dual-stack underlay Subnet on VLAN 100
// (cidrBlock and gateway "v4,v6") gives its pods both families; each pod reaches the site
// router and is reached by the site device over IPv4 and IPv6 (ping, and TCP from the device),
// and pods on two hosts talk in both families over the site switch, tagged 100, with no
// Geneve packet. With u2oInterconnection the router port gets one address per family
// (status.u2oInterconnectionIP "v4,v6"), the policies are written per family, a new pod's
// default routes of both families go through the u2o addresses, and the pod reaches an
// overlay pod on the other host and the hosts reach it, over IPv4 and IPv6.
func TestUnderlayDualStack(t *testing.T) {
	w, ctx := startUnderlaySpec(t, clusterSpec{hosts: 2,
		extra:        []string{"--cluster-cidr=" + dualClusterCIDR, "--service-cidr=10.43.0.0/16,2001:cafe:43::/112"},
		serviceCIDRs: []netip.Prefix{netip.MustParsePrefix("10.43.0.0/16"), netip.MustParsePrefix("2001:cafe:43::/112")}})
	w.addSite6(ctx, t)
	w.waitHosts6(ctx, t, "eth1")
	ping6 := startPinger(t, w.cl.hosts[0].rig.Netns, siteFar6)
	time.Sleep(300 * time.Millisecond)
	applyYAML(ctx, t, w.pns, "apiVersion: kubeovn.io/v1\nkind: ProviderNetwork\nmetadata:\n  name: site\nspec:\n  defaultInterface: eth1\n")
	w.pnReady(ctx, t, "site")
	time.Sleep(2 * time.Second)
	sent, lost := ping6.stop(t)
	t.Logf("%s: IPv6 pings (10 ms apart) through the route br-site took from eth1, until 2 s after Ready: %d sent, %d lost", w.cl.names[0], sent, lost)
	if lost > 0 {
		t.Errorf("%s lost %d of %d IPv6 pings through its eth1 route while br-site took eth1", w.cl.names[0], lost, sent)
	}
	w.checkHosts6(ctx, t)
	applyYAML(ctx, t, w.vlans, "apiVersion: kubeovn.io/v1\nkind: Vlan\nmetadata:\n  name: v100\nspec:\n  id: 100\n  provider: site\n")
	applyYAML(ctx, t, w.subnets, dualUnderlaySubnet)
	waitCondition(ctx, t, w.subnets, "under", kubeovn.ConditionReady, "True", "")
	h0, h1 := w.cl.hosts[0], w.cl.hosts[1]

	p1, p2 := w.underlayPod(ctx, t, 0, "u1", "under"), w.underlayPod(ctx, t, 1, "u2", "under")
	p16, p26 := podIP6(t, p1), podIP6(t, p2)
	if !netipIn(p1.IP().String(), "192.0.2.") || !netipIn(p16.String(), "2001:db8:2::") || !netipIn(p26.String(), "2001:db8:2::") {
		t.Fatalf("underlay pods' addresses %s %s, %s %s: want 192.0.2.x and 2001:db8:2::x", p1.IP(), p16, p2.IP(), p26)
	}
	podRoutes(ctx, t, p1, "via 192.0.2.1", "via 2001:db8:2::1")
	for _, gw := range []netip.Addr{siteGW.Addr(), siteGW6.Addr()} {
		retryPing(ctx, t, p1, gw, "underlay pod -> site router "+gw.String())
	}
	for _, to := range []netip.Addr{p1.IP(), p16} {
		if out, err := w.site.InDevice(ctx, "ping", "-c3", "-i0.2", "-W1", to.String()); err != nil {
			t.Fatalf("site device -> underlay pod %s: %v\n%s", to, err, out)
		}
		if err := podsim.TCPBetween(ctx, "/run/netns/"+w.site.DeviceNetns, p1.Netns, to); err != nil {
			t.Fatalf("tcp site device -> pod %s: %v", to, err)
		}
	}
	retryPing(ctx, t, p1, p2.IP(), "underlay pod -> underlay pod on the other host (IPv4)")
	retryPing(ctx, t, p1, p26, "underlay pod -> underlay pod on the other host (IPv6)")
	var tagged4, tagged6 int
	geneve := capture(ctx, t, h0.rig.Netns, "eth0", geneveOf(p1.IP(), p2.IP(), p16, p26), func() {
		_, out := captureOut(ctx, t, w.site.Switch.Netns, w.site.Leg(h0.rig), "vlan 100 and (icmp or icmp6)", func() {
			for _, to := range []netip.Addr{p2.IP(), p26} {
				if _, err := podsim.Ping(ctx, p1, to); err != nil {
					t.Error(err)
				}
			}
		})
		tagged4, tagged6 = countTagged(out, "ICMP echo"), countTagged(out, "ICMP6, echo")
		if err := podsim.TCPBetween(ctx, p1.Netns, p2.Netns, p26); err != nil {
			t.Errorf("tcp underlay pod -> underlay pod on the other host over IPv6: %v", err)
		}
	})
	if tagged4 < 6 || tagged6 < 6 || geneve != 0 {
		t.Errorf("pod to pod across hosts: %d IPv4 and %d IPv6 echo packets tagged 100 on %s's site leg (want 6 each), %d Geneve packets (want 0)",
			tagged4, tagged6, w.cl.names[0], geneve)
	}

	w.checkBridgeKept(ctx, t)

	// u2oInterconnection in dual stack.
	o1 := runPod(ctx, t, h1, "o1")
	o16 := podIP6(t, o1)
	w.patchSubnet(ctx, t, "under", `{"spec":{"u2oInterconnection":true}}`)
	st := w.waitU2O(ctx, t, "under", func(st kubeovn.SubnetStatus) bool { return st.U2OInterconnectionIP != "" })
	// .2-.9 and ::2-::9 are excluded, u1 and u2 hold .10, .11 and ::a, ::b: the first free are .12, ::c.
	if st.U2OInterconnectionIP != "192.0.2.12,2001:db8:2::c" {
		t.Errorf("u2o status %q, want 192.0.2.12,2001:db8:2::c (one per family, the first free)", st.U2OInterconnectionIP)
	}
	nbctl := func(args ...string) string {
		return w.cl.central(ctx, t, "ovn-nbctl", append([]string{"--db=" + w.cl.c.Central.NBEndpoint}, args...)...)
	}
	if got := nbctl("--columns=networks", "list", "Logical_Router_Port", "ovn-cluster-under"); !strings.Contains(got, "192.0.2.12/24") || !strings.Contains(got, "2001:db8:2::c/64") {
		t.Errorf("u2o router port: %s", got)
	}
	policies := nbctl("lr-policy-list", "ovn-cluster")
	for _, want := range []string{"29400 *ip4.dst == 192.0.2.0/24 *allow", "29000 *ip4.src == 192.0.2.0/24 *reroute *192.0.2.1",
		"29400 *ip6.dst == 2001:db8:2::/64 *allow", "29000 *ip6.src == 2001:db8:2::/64 *reroute *2001:db8:2::1"} {
		if !reMatch(policies, want) {
			t.Errorf("router policies lack %q:\n%s", want, policies)
		}
	}
	u := w.underlayPod(ctx, t, 0, "uon", "under")
	u6 := podIP6(t, u)
	podRoutes(ctx, t, u, "via 192.0.2.12", "via 2001:db8:2::c")
	retryPing(ctx, t, u, o1.IP(), "underlay pod -> overlay pod on the other host (u2o, IPv4)")
	retryPing(ctx, t, u, o16, "underlay pod -> overlay pod on the other host (u2o, IPv6)")
	retryPing(ctx, t, o1, u6, "overlay pod on the other host -> underlay pod (u2o, IPv6)")
	if err := podsim.TCPBetween(ctx, o1.Netns, u.Netns, u6); err != nil {
		t.Errorf("tcp overlay pod -> underlay pod over IPv6: %v", err)
	}
	if err := podsim.TCPBetween(ctx, u.Netns, o1.Netns, o16); err != nil {
		t.Errorf("tcp underlay pod -> overlay pod over IPv6: %v", err)
	}
	for i, h := range w.cl.hosts {
		hostPing(ctx, t, h, u.IP(), w.cl.names[i]+" -> underlay pod (u2o, IPv4, through ovn0)")
		hostPing(ctx, t, h, u6, w.cl.names[i]+" -> underlay pod (u2o, IPv6, through ovn0)")
	}
	retryPing(ctx, t, u, siteDevice6.Addr(), "underlay pod (u2o) -> site device over IPv6, on the LAN")
}

// checkBridgeKept: with an underlay Subnet wired (ovn-controller's patch port on br-site), a
// sync of the provider network (here: an annotation on it) changes nothing: each host's
// br-site is the same row, and a host's ping through it loses nothing. (Counting the patch
// port as a second NIC gave the bridge back and took it again at each sync.)
func (w *underlayWorld) checkBridgeKept(ctx context.Context, t *testing.T) {
	t.Helper()
	uuids := make([]string, len(w.cl.hosts))
	for i, e := range w.cl.hosts {
		uuids[i] = e.vsctl(ctx, t, "get", "Bridge", "br-site", "_uuid")
	}
	ping := startPinger(t, w.cl.hosts[0].rig.Netns, siteFar)
	time.Sleep(300 * time.Millisecond)
	if _, err := w.pns.Patch(ctx, "site", types.MergePatchType, []byte(`{"metadata":{"annotations":{"test/poke":"1"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the nodes' sync runs on the change
	sent, lost := ping.stop(t)
	for i, e := range w.cl.hosts {
		if got := e.vsctl(ctx, t, "get", "Bridge", "br-site", "_uuid"); got != uuids[i] {
			t.Errorf("%s: br-site was made again (%s, before %s) on a sync of an unchanged provider network", w.cl.names[i], got, uuids[i])
		}
	}
	if lost > 0 {
		t.Errorf("%s lost %d of %d pings through br-site across a sync of an unchanged provider network", w.cl.names[0], lost, sent)
	}
}

// addSite6 gives the site router and device their IPv6 addresses on VLAN 100 (the router
// forwarding, the device's default route through it), the router its IPv6 on the untagged
// LAN and a far address, and each host an IPv6 address on eth1 (with DAD, as a real host)
// and a route to the far network through the router.
func (w *underlayWorld) addSite6(ctx context.Context, t *testing.T) {
	t.Helper()
	steps := []struct {
		in   func(context.Context, string, ...string) ([]byte, error)
		args []string
	}{
		{w.site.InRouter, []string{"ip", "addr", "add", siteGW6.String(), "dev", "eth0", "nodad"}},
		{w.site.InRouter, []string{"sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"}},
		{w.site.InDevice, []string{"ip", "addr", "add", siteDevice6.String(), "dev", "eth0", "nodad"}},
		{w.site.InDevice, []string{"ip", "-6", "route", "add", "default", "via", siteGW6.Addr().String()}},
		{w.site.InRouter, []string{"ip", "addr", "add", siteLAN6.String(), "dev", "eth1", "nodad"}},
		{w.site.InRouter, []string{"ip", "addr", "add", siteFar6.String() + "/128", "dev", "lo"}},
	}
	for _, s := range steps {
		if out, err := s.in(ctx, s.args[0], s.args[1:]...); err != nil {
			t.Fatalf("site IPv6: %v %s", err, out)
		}
	}
	for i, e := range w.cl.hosts {
		for _, args := range [][]string{{"addr", "add", fmt.Sprintf("2001:db8:51::%d/64", 11+i), "dev", "eth1"},
			{"-6", "route", "add", siteFar6Net, "via", siteLAN6.Addr().String(), "dev", "eth1"}} {
			if out, err := e.rig.Run(ctx, "ip", args...); err != nil {
				t.Fatalf("%s: ip %v: %v %s", w.cl.names[i], args, err, out)
			}
		}
	}
}

// checkHosts6: each host's IPv6 address on eth1 and its route through the site router went
// to br-site with the IPv4 ones (usable, not tentative), and the host reaches the site
// router's far IPv6 address through it.
func (w *underlayWorld) checkHosts6(ctx context.Context, t *testing.T) {
	t.Helper()
	for i, e := range w.cl.hosts {
		want := fmt.Sprintf("2001:db8:51::%d/64", 11+i)
		var view string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			out, _ := e.rig.Run(ctx, "ip", "-6", "-o", "addr", "show", "dev", "br-site")
			if view = string(out); strings.Contains(view, want) && !strings.Contains(view, "tentative") {
				break
			}
		}
		if !strings.Contains(view, want) || strings.Contains(view, "tentative") || strings.Contains(view, "dadfailed") {
			t.Errorf("%s: want %s on br-site, usable, in 10 s: %s", w.cl.names[i], want, view)
		}
		routes, _ := e.rig.Run(ctx, "ip", "-6", "route")
		if !strings.Contains(string(routes), siteFar6Net+" via "+siteLAN6.Addr().String()+" dev br-site") {
			t.Errorf("%s: want the route %s via %s on br-site:\n%s", w.cl.names[i], siteFar6Net, siteLAN6.Addr(), routes)
		}
		if out, err := e.rig.Run(ctx, "ping", "-c3", "-i0.2", "-W1", siteFar6.String()); err != nil {
			t.Errorf("%s -> %s over IPv6 through br-site: %v\n%s", w.cl.names[i], siteFar6, err, out)
		}
	}
}

// waitHosts6 waits until each host's IPv6 address on dev has passed DAD.
func (w *underlayWorld) waitHosts6(ctx context.Context, t *testing.T, dev string) {
	t.Helper()
	for i, e := range w.cl.hosts {
		want := fmt.Sprintf("2001:db8:51::%d/64", 11+i)
		eventually(ctx, t, w.cl.names[i]+": "+want+" on "+dev+" past DAD", func() bool {
			out, _ := e.rig.Run(ctx, "ip", "-6", "-o", "addr", "show", "dev", dev)
			return strings.Contains(string(out), want) && !strings.Contains(string(out), "tentative")
		})
	}
}

// podRoutes checks the pod's default routes: IPv4 via4, IPv6 via6.
func podRoutes(ctx context.Context, t *testing.T, sb *podsim.Sandbox, via4, via6 string) {
	t.Helper()
	for fam, want := range map[string]string{"-4": via4, "-6": via6} {
		out, err := exec.CommandContext(ctx, "ip", "netns", "exec", sb.NetnsName(), "ip", fam, "route", "show", "default").CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("pod %s: ip %s default route %q %v, want %s", sb.Pod.Name, fam, out, err, want)
		}
	}
}

// countTagged counts the lines of tcpdump -e output holding what and an 802.1Q tag 100.
func countTagged(out, what string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, what) && strings.Contains(l, "vlan 100") {
			n++
		}
	}
	return n
}
