package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
	"github.com/edgeovn/edgeovn/e2e/skip"
)

// The BGP tests' site: the router (FRR, AS 65001) at 198.51.100.1 on the hosts' LAN, the
// hosts at 198.51.100.11, .12 (AS 65000), and a site device at 192.0.2.200 behind the
// router, which knows the cluster only from what BGP told it.
const (
	bgpRouterAS  = 65001
	bgpClusterAS = 65000
)

// bgpWorld is hosts peering with FRR on a site.
type bgpWorld struct {
	cl      *cluster
	site    *harness.Site
	frr     *harness.FRR
	subnets dynamic.NamespaceableResourceInterface
	hosts   []netip.Addr // each host's own address on the LAN (hosts[i] is cl.hosts[i]'s)
	hosts6  []netip.Addr // with bgpSpec.ipv6, each host's IPv6 address on the LAN
}

// bgpSpec says how the world is set up.
type bgpSpec struct {
	hosts int
	extra []string // edgeovn flags besides the neighbour's
	// neighbor is the FRR configuration of each host's neighbour statement besides
	// remote-as (" password x"); one entry per host, or none.
	neighbor []string
	// ipv6: a dual-stack cluster and site, each host also peering with the router over IPv6
	// (neighbor-ipv6-address) for IPv6 unicast (bgp_ipv6_test.go).
	ipv6 bool
	// ipv6Only: with ipv6, the hosts are given no IPv4 neighbour (an IPv6-only site).
	ipv6Only bool
}

func startBGP(t *testing.T, spec bgpSpec) (*bgpWorld, context.Context) {
	t.Helper()
	if err := harness.FRRAvailable(); err != nil {
		skip.Now(t, "bgp tests: %v", err)
	}
	extra := append([]string{fmt.Sprintf("--neighbor-as=%d", bgpRouterAS), fmt.Sprintf("--cluster-as=%d", bgpClusterAS), "--holdtime=9s"}, spec.extra...)
	if !spec.ipv6Only {
		extra = append(extra, "--neighbor-address="+siteLAN.Addr().String())
	}
	if spec.ipv6 {
		extra = append(extra, "--cluster-cidr="+dualClusterCIDR, "--neighbor-ipv6-address="+siteLAN6.Addr().String())
	}
	cl, ctx := startCluster(t, spec.hosts, extra...)
	site, err := cl.c.AddSite(ctx, harness.SiteOptions{Gateway: siteGW, Device: siteDevice, LAN: siteLAN})
	if err != nil {
		t.Fatalf("site: %v", err)
	}
	w := &bgpWorld{cl: cl, site: site}
	var conf strings.Builder
	fmt.Fprintf(&conf, "router bgp %d\n bgp router-id %s\n no bgp ebgp-requires-policy\n timers bgp 3 9\n", bgpRouterAS, siteLAN.Addr())
	for i, e := range cl.hosts {
		addr := netip.AddrFrom4([4]byte{198, 51, 100, byte(11 + i)})
		w.hosts = append(w.hosts, addr)
		if out, err := e.rig.Run(ctx, "ip", "addr", "add", addr.String()+"/24", "dev", harness.SiteNIC); err != nil {
			t.Fatalf("%s: %v %s", cl.names[i], err, out)
		}
		// The way back to the site's devices; nothing else tells the hosts.
		if out, err := e.rig.Run(ctx, "ip", "route", "add", siteGW.Masked().String(), "via", siteLAN.Addr().String()); err != nil {
			t.Fatalf("%s: %v %s", cl.names[i], err, out)
		}
		fmt.Fprintf(&conf, " neighbor %s remote-as %d\n neighbor %s timers connect 1\n", addr, bgpClusterAS, addr)
		if i < len(spec.neighbor) && spec.neighbor[i] != "" {
			fmt.Fprintf(&conf, " neighbor %s%s\n", addr, spec.neighbor[i])
		}
	}
	if spec.ipv6 {
		w.addIPv6(ctx, t, &conf)
	}
	w.frr, err = site.StartFRR(ctx, harness.FRRSpec{Dir: t.TempDir(), Netns: site.RouterNetns, BGPConfig: conf.String()})
	if err != nil {
		t.Fatalf("frr: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := w.frr.Vtysh(context.Background(), "show bgp summary")
			t.Logf("frr:\n%s", out)
		}
	})
	dyn, err := dynamic.NewForConfig(cl.c.Central.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	w.subnets = dyn.Resource(kubeovn.SubnetResource)
	return w, ctx
}

// established waits until FRR has the session with every host in hosts up.
func (w *bgpWorld) established(ctx context.Context, t *testing.T, hosts ...int) {
	t.Helper()
	for _, i := range hosts {
		eventually(ctx, t, "bgp session with "+w.cl.names[i], func() bool {
			s, err := w.frr.PeerState(ctx, w.hosts[i])
			return err == nil && s == "Established"
		})
	}
}

// nextHops are the next hops of FRR's valid paths to p (none: not in its RIB); stale
// says whether any of them is kept by graceful restart.
func (w *bgpWorld) nextHops(ctx context.Context, t *testing.T, p netip.Prefix) (hops []netip.Addr, stale bool) {
	t.Helper()
	routes, err := w.frr.Routes(ctx, p.Addr().Is6())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.Prefix == p && r.Valid {
			hops = append(hops, r.NextHop)
			stale = stale || r.Stale
		}
	}
	slices.SortFunc(hops, func(a, b netip.Addr) int { return a.Compare(b) })
	return hops, stale
}

// waitHops waits until FRR's paths to p have exactly the next hops want (none: withdrawn).
func (w *bgpWorld) waitHops(ctx context.Context, t *testing.T, p netip.Prefix, want ...netip.Addr) time.Duration {
	t.Helper()
	start := time.Now()
	var got []netip.Addr
	eventually(ctx, t, fmt.Sprintf("%s in the router's RIB via %v", p, want), func() bool {
		got, _ = w.nextHops(ctx, t, p)
		return slices.Equal(got, want)
	})
	return time.Since(start)
}

func (w *bgpWorld) subnet(ctx context.Context, t *testing.T, name, cidr, annotation string) {
	t.Helper()
	ann := ""
	if annotation != "" {
		ann = fmt.Sprintf("\n  annotations:\n    %s: %q", bgp.Annotation, annotation)
	}
	doc := fmt.Sprintf("apiVersion: kubeovn.io/v1\nkind: Subnet\nmetadata:\n  name: %s%s\nspec:\n  cidrBlock: %s\n  natOutgoing: false\n", name, ann, cidr)
	if err := createYAML(ctx, w.subnets, doc); err != nil {
		t.Fatalf("subnet %s: %v", name, err)
	}
	waitCondition(ctx, t, w.subnets, name, kubeovn.ConditionReady, "True", "")
}

// annotate sets (or, with "", removes) the bgp annotation of a Subnet.
func (w *bgpWorld) annotate(ctx context.Context, t *testing.T, name, value string) {
	t.Helper()
	v := "null"
	if value != "" {
		v = fmt.Sprintf("%q", value)
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, bgp.Annotation, v)
	if _, err := w.subnets.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// pod runs a pod on host i in subnet, with the bgp annotation value (none: ""), serving TCP
// on 8080.
func (w *bgpWorld) pod(ctx context.Context, t *testing.T, i int, name, subnet, value string) (*corev1.Pod, *podsim.Sandbox) {
	t.Helper()
	e := w.cl.hosts[i]
	ann := map[string]string{"ovn.kubernetes.io/logical_switch": subnet}
	if value != "" {
		ann[bgp.Annotation] = value
	}
	pod, err := e.kubelet.CreatePod(ctx, "default", name, ann)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := e.kubelet.RunSandbox(ctx, pod)
	if sb != nil {
		t.Cleanup(func() { _ = podsim.RemoveNetns(sb.Netns) })
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
	srv, err := podsim.Serve(ctx, podsim.ServeRequest{Netns: sb.Netns, Port: 8080, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return pod, sb
}

// reach checks that the site device pings the pod and opens TCP to it, over the routes the
// router learned.
func (w *bgpWorld) reach(ctx context.Context, t *testing.T, sb *podsim.Sandbox, name string) {
	t.Helper()
	w.reachAddr(ctx, t, sb.IP(), name, siteDevice.Addr())
}

// reachAddr checks that the site device, whose address of ip's family is from, pings the pod
// named name at ip and opens TCP to it.
func (w *bgpWorld) reachAddr(ctx context.Context, t *testing.T, ip netip.Addr, name string, from netip.Addr) {
	t.Helper()
	// The route reaches the router's kernel a moment after its RIB (zebra): until then the
	// router answers "net unreachable", so the first tries may fail.
	var out []byte
	var err error
	for try := 0; try < 5; try++ {
		if out, err = w.site.InDevice(ctx, "ping", "-c", "3", "-i", "0.2", "-w", "5", ip.String()); err == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("site device ping %s (%s): %v\n%s\n%s", name, ip, err, out, w.paths(ctx))
	}
	ans, err := podsim.Send(ctx, podsim.SendRequest{Netns: filepath.Join("/run/netns", w.site.DeviceNetns), Protocol: corev1.ProtocolTCP,
		Addr: netip.AddrPortFrom(ip, 8080), Timeout: 5 * time.Second})
	if err != nil || ans.Server != name {
		t.Fatalf("site device TCP to %s (%s): %+v %v", name, ip, ans, err)
	}
	if ans.Client.Addr() != from {
		t.Errorf("the pod saw the site device as %s, want %s (no NAT on the way)", ans.Client.Addr(), from)
	}
}

// paths is what the router and the hosts route and filter, for a failure's message.
func (w *bgpWorld) paths(ctx context.Context) string {
	var b strings.Builder
	out, _ := w.site.InRouter(ctx, "ip", "route")
	fmt.Fprintf(&b, "router routes:\n%s", out)
	out, _ = w.frr.Vtysh(ctx, "show ip route")
	fmt.Fprintf(&b, "zebra's routes:\n%s", out)
	if len(w.hosts6) > 0 {
		out, _ = w.site.InRouter(ctx, "ip", "-6", "route")
		fmt.Fprintf(&b, "router IPv6 routes:\n%s", out)
	}
	for _, log := range []string{"zebra.log", "bgpd.log"} {
		data, _ := os.ReadFile(filepath.Join(w.frr.Dir, log))
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "%s (end):\n%s\n", log, data)
	}
	for i, e := range w.cl.hosts {
		for _, args := range [][]string{{"ip", "route"}, {"ip", "-6", "route"}, {"sysctl", "net.ipv4.ip_forward", "net.ipv4.conf.all.rp_filter", "net.ipv4.conf.eth1.rp_filter", "net.ipv6.conf.all.forwarding"}, {"nft", "list", "ruleset"}} {
			out, _ := e.rig.Run(ctx, args[0], args[1:]...)
			fmt.Fprintf(&b, "%s %v:\n%s", w.cl.names[i], args, out)
		}
	}
	return b.String()
}

// bgpStatus is `edgeovn status`'s bgp section on host i (through its /bgp).
func (w *bgpWorld) bgpStatus(ctx context.Context, t *testing.T, i int) string {
	t.Helper()
	e := w.cl.hosts[i]
	out, err := e.rig.Run(ctx, e.bin, "status", "--config=/dev/null", "--node-name="+w.cl.names[i], "--kubeconfig="+e.rig.Kubeconfig,
		"--ovn-nb="+e.rig.NBEndpoint, "--ovn-sb="+e.rig.SBEndpoint, "--ovs-db="+e.rig.OVSEndpoint, "--ipam-db="+e.ipamDB)
	if i := strings.Index(string(out), "\nbgp:"); i >= 0 {
		lines := strings.Split(string(out)[i+1:], "\n")
		n := 1
		for n < len(lines) && strings.HasPrefix(lines[n], "  ") {
			n++
		}
		return strings.Join(lines[:n], "\n")
	}
	t.Fatalf("edgeovn status has no bgp section (%v):\n%s", err, out)
	return ""
}

// TestBGPSubnetAndPods: an annotated Subnet is announced from every host with the host's own
// address as next hop and the site device reaches a pod on each host over those routes; a bad
// value on another Subnet is an Event and withdraws nothing; removing the annotation withdraws
// the route. A pod annotated "local", and the pods of a Subnet annotated "local", are
// announced from their own host only, and withdrawn when deleted.
func TestBGPSubnetAndPods(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 2})
	w.established(ctx, t, 0, 1)
	sn := netip.MustParsePrefix("10.61.0.0/24")
	w.subnet(ctx, t, "bgp-a", sn.String(), "true")
	took := w.waitHops(ctx, t, sn, w.hosts...)
	t.Logf("%s announced by both hosts, in the router's RIB %v after the Subnet was Ready", sn, took)
	_, a1 := w.pod(ctx, t, 0, "web-a1", "bgp-a", "")
	_, a2 := w.pod(ctx, t, 1, "web-a2", "bgp-a", "")
	// Each pod's host route from its own host: replies leave through it, so requests must
	// enter there (bgp.Announcements says why).
	w.waitHops(ctx, t, netip.PrefixFrom(a1.IP(), 32), w.hosts[0])
	w.waitHops(ctx, t, netip.PrefixFrom(a2.IP(), 32), w.hosts[1])
	w.reach(ctx, t, a1, "web-a1")
	w.reach(ctx, t, a2, "web-a2")

	st := w.bgpStatus(ctx, t, 0)
	if !strings.Contains(st, "peer "+siteLAN.Addr().String()+" (as 65001): established") || !strings.Contains(st, sn.String()) {
		t.Errorf("status does not show the session and the prefix:\n%s", st)
	}

	// A value that is none of Kube-OVN's: an Event naming it, nothing else withdrawn.
	w.subnet(ctx, t, "bgp-typo", "10.62.0.0/24", "yes")
	eventually(ctx, t, "a Warning Event naming the bad value", func() bool {
		evs, err := w.cl.c.Central.Kube().CoreV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range evs.Items {
			if e.Reason == bgp.ReasonBadAnnotation && e.InvolvedObject.Name == "bgp-typo" && strings.Contains(e.Message, `"yes"`) {
				return true
			}
		}
		return false
	})
	if hops, _ := w.nextHops(ctx, t, netip.MustParsePrefix("10.62.0.0/24")); len(hops) != 0 {
		t.Errorf("the subnet with a bad value is announced via %v", hops)
	}
	if hops, _ := w.nextHops(ctx, t, sn); !slices.Equal(hops, w.hosts) {
		t.Errorf("a bad value elsewhere changed %s's paths to %v", sn, hops)
	}

	w.annotate(ctx, t, "bgp-a", "")
	took = w.waitHops(ctx, t, sn)
	t.Logf("%s withdrawn %v after the annotation was removed", sn, took)
	w.waitHops(ctx, t, netip.PrefixFrom(a1.IP(), 32))
	w.waitHops(ctx, t, netip.PrefixFrom(a2.IP(), 32))

	// local: a pod's /32 from its own host; a Subnet's pods from theirs.
	_, p1 := w.pod(ctx, t, 0, "web-local", "bgp-a", bgp.PolicyLocal)
	host1 := netip.PrefixFrom(p1.IP(), 32)
	w.waitHops(ctx, t, host1, w.hosts[0])
	w.reach(ctx, t, p1, "web-local")
	w.annotate(ctx, t, "bgp-a", bgp.PolicyLocal)
	w.waitHops(ctx, t, netip.PrefixFrom(a2.IP(), 32), w.hosts[1])
	w.waitHops(ctx, t, netip.PrefixFrom(a1.IP(), 32), w.hosts[0])
	if hops, _ := w.nextHops(ctx, t, sn); len(hops) != 0 {
		t.Errorf("Subnet local announced its CIDR via %v", hops)
	}
	pod, _ := w.cl.c.Central.Kube().CoreV1().Pods("default").Get(ctx, "web-local", metav1.GetOptions{})
	if err := w.cl.hosts[0].kubelet.DeletePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
	took = w.waitHops(ctx, t, host1)
	t.Logf("%s withdrawn %v after the pod was deleted", host1, took)
}

// TestBGPMD5: with auth-password the session with a router that has the same password comes
// up; with a router that has another, it does not, and edgeovn status says why.
func TestBGPMD5(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 2, extra: []string{"--auth-password=edge-right"},
		neighbor: []string{" password edge-right", " password edge-wrong"}})
	w.established(ctx, t, 0)
	if st := w.bgpStatus(ctx, t, 0); !strings.Contains(st, ": established") {
		t.Errorf("host with the right password: status does not say established:\n%s", st)
	}
	var st string
	eventually(ctx, t, "status of the host with the wrong password says why", func() bool {
		st = w.bgpStatus(ctx, t, 1)
		return strings.Contains(st, "TCP MD5 authentication fails")
	})
	t.Logf("wrong password: %s", st)
	if s, _ := w.frr.PeerState(ctx, w.hosts[1]); s == "Established" {
		t.Errorf("session with the wrong password is up")
	}
}

// restart stops edgeovn on host i (SIGTERM, as systemd does) and starts it again with the
// cluster's flags and extra; between the two, during runs.
func (w *bgpWorld) restart(ctx context.Context, t *testing.T, i int, during func(), extra ...string) {
	t.Helper()
	e := w.cl.hosts[i]
	if err := e.daemon.Stop(); err != nil {
		t.Fatal(err)
	}
	during()
	var err error
	flags := append(append(append([]string{}, daemonFlags...), w.cl.extra...), extra...)
	e.daemon, err = daemon.Start(ctx, e.rig, daemon.Spec{Node: w.cl.names[i], BinDir: w.cl.bins, Extra: flags})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.kubelet.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, e.daemonLog())
	}
}

// TestBGPGracefulRestart: without graceful restart a stopping edgeovn withdraws its routes at
// once and announces them again when back; with it, the router keeps them (stale) while
// edgeovn restarts, and the site device's pings to a pod go on.
func TestBGPGracefulRestart(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 1})
	w.established(ctx, t, 0)
	sn := netip.MustParsePrefix("10.63.0.0/24")
	w.subnet(ctx, t, "bgp-gr", sn.String(), "true")
	_, sb := w.pod(ctx, t, 0, "web-gr", "bgp-gr", "")
	host := netip.PrefixFrom(sb.IP(), 32)
	w.waitHops(ctx, t, host, w.hosts[0])

	w.restart(ctx, t, 0, func() {
		if hops, _ := w.nextHops(ctx, t, sn); len(hops) != 0 {
			t.Errorf("without graceful restart: %s still via %v once edgeovn stopped", sn, hops)
		}
	})
	w.waitHops(ctx, t, sn, w.hosts[0])
	w.waitHops(ctx, t, host, w.hosts[0])

	// Turn graceful restart on (a restart that withdraws once more), then restart with it.
	w.restart(ctx, t, 0, func() {}, "--graceful-restart", "--graceful-restart-time=60s")
	w.established(ctx, t, 0)
	w.waitHops(ctx, t, host, w.hosts[0])
	w.reach(ctx, t, sb, "web-gr")
	p := startPinger(t, w.site.DeviceNetns, sb.IP())
	w.restart(ctx, t, 0, func() {
		time.Sleep(2 * time.Second) // longer than a Cease takes to withdraw
		hops, stale := w.nextHops(ctx, t, host)
		if !slices.Equal(hops, w.hosts[:1]) || !stale {
			t.Errorf("with graceful restart: %s via %v (stale %v) while edgeovn is stopped, want kept as stale", host, hops, stale)
		}
	}, "--graceful-restart", "--graceful-restart-time=60s")
	w.established(ctx, t, 0)
	eventually(ctx, t, "routes fresh again after the restart", func() bool {
		hops, stale := w.nextHops(ctx, t, host)
		return slices.Equal(hops, w.hosts[:1]) && !stale
	})
	sent, lost := p.stop(t)
	t.Logf("site device pinged the pod across the graceful restart: %d sent, %d lost", sent, lost)
	if lost > sent/10 {
		t.Errorf("%d of %d pings lost across a graceful restart", lost, sent)
	}
}

// TestBGPClusterIP: with announce-cluster-ip, an annotated Service's ClusterIP is announced
// from the host and the site device reaches the Service through it; the annotation removed,
// it is withdrawn.
func TestBGPClusterIP(t *testing.T) {
	w, ctx := startBGP(t, bgpSpec{hosts: 1, extra: []string{"--announce-cluster-ip"}})
	w.established(ctx, t, 0)
	e := w.cl.hosts[0]
	_, sb := w.pod(ctx, t, 0, "web-svc", "ovn-default", "")
	svc := createService(ctx, t, e, "svc-bgp", func(svc *corev1.Service) {
		svc.Spec.Selector = nil
		svc.Annotations = map[string]string{bgp.Annotation: bgp.PolicyTrue}
	})
	publishEndpointsOn(ctx, t, e, "svc-bgp", map[*podsim.Sandbox]string{sb: w.cl.names[0]})
	vip := netip.MustParseAddr(svc.Spec.ClusterIP)
	took := w.waitHops(ctx, t, netip.PrefixFrom(vip, 32), w.hosts[0])
	t.Logf("ClusterIP %s in the router's RIB %v after the Service was created", vip, took)
	var ans podsim.Answer
	eventually(ctx, t, "site device reaches the Service's ClusterIP", func() bool {
		var err error
		ans, err = podsim.Send(ctx, podsim.SendRequest{Netns: filepath.Join("/run/netns", w.site.DeviceNetns), Protocol: corev1.ProtocolTCP,
			Addr: netip.AddrPortFrom(vip, 80), Timeout: 2 * time.Second})
		return err == nil && ans.Server == "web-svc"
	})
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, bgp.Annotation)
	if _, err := e.kubelet.Kube.CoreV1().Services("default").Patch(ctx, "svc-bgp", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitHops(ctx, t, netip.PrefixFrom(vip, 32))
}

// TestBGPGoBGPD: the same announcement to GoBGP's own daemon as the site router: an annotated
// Subnet's prefix in its RIB with the host's address as next hop, withdrawn with the
// annotation.
func TestBGPGoBGPD(t *testing.T) {
	if _, err := exec.LookPath("gobgpd"); err != nil {
		skip.Now(t, "gobgpd not installed (apt-get install gobgpd): %v", err)
	}
	cl, ctx := startCluster(t, 1, "--neighbor-address="+siteLAN.Addr().String(), fmt.Sprintf("--neighbor-as=%d", bgpRouterAS),
		fmt.Sprintf("--cluster-as=%d", bgpClusterAS), "--holdtime=9s")
	site, err := cl.c.AddSite(ctx, harness.SiteOptions{Gateway: siteGW, Device: siteDevice, LAN: siteLAN})
	if err != nil {
		t.Fatalf("site: %v", err)
	}
	host := netip.MustParseAddr("198.51.100.11")
	if out, err := cl.hosts[0].rig.Run(ctx, "ip", "addr", "add", host.String()+"/24", "dev", harness.SiteNIC); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	conf := fmt.Sprintf("[global.config]\n  as = %d\n  router-id = %q\n  port = 179\n\n[[neighbors]]\n  [neighbors.config]\n    neighbor-address = %q\n    peer-as = %d\n",
		bgpRouterAS, siteLAN.Addr(), host, bgpClusterAS)
	g, err := site.StartGoBGPD(ctx, harness.GoBGPDSpec{Dir: t.TempDir(), Netns: site.RouterNetns, Config: conf})
	if err != nil {
		t.Fatalf("gobgpd: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cl.c.Central.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := &bgpWorld{cl: cl, site: site, subnets: dyn.Resource(kubeovn.SubnetResource), hosts: []netip.Addr{host}}
	sn := netip.MustParsePrefix("10.64.0.0/24")
	w.subnet(ctx, t, "bgp-gobgpd", sn.String(), bgp.PolicyCluster)
	hops := func() []netip.Addr {
		rib, err := g.Routes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rib[sn]
	}
	eventually(ctx, t, sn.String()+" in gobgpd's RIB via the host", func() bool { return slices.Equal(hops(), []netip.Addr{host}) })
	w.annotate(ctx, t, "bgp-gobgpd", "")
	eventually(ctx, t, sn.String()+" withdrawn from gobgpd's RIB", func() bool { return len(hops()) == 0 })
}
