package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	rx "regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The site of the underlay tests: VLAN 100 carries 192.0.2.0/24 (the site router at .1, a
// device at .200); the untagged LAN 198.51.100.0/24 holds the hosts' own eth1 addresses
// (.11, .12) and the router (.1), which also holds 198.18.0.1, reached through it.
var (
	siteGW     = netip.MustParsePrefix("192.0.2.1/24")
	siteDevice = netip.MustParsePrefix("192.0.2.200/24")
	siteLAN    = netip.MustParsePrefix("198.51.100.1/24")
	siteFar    = netip.MustParseAddr("198.18.0.1")
)

// underlayWorld is two hosts on a site, with the kubeovn.io/v1 clients.
type underlayWorld struct {
	cl                  *cluster
	site                *harness.Site
	pns, vlans, subnets dynamic.NamespaceableResourceInterface
	dyn                 *dynamic.DynamicClient // the central's API, for any other kind
}

func startUnderlay(t *testing.T) (*underlayWorld, context.Context) {
	t.Helper()
	return startUnderlayHosts(t, 2)
}

// startUnderlayHosts is startUnderlay with n hosts.
func startUnderlayHosts(t *testing.T, n int) (*underlayWorld, context.Context) {
	t.Helper()
	return startUnderlaySpec(t, clusterSpec{hosts: n})
}

// startUnderlaySpec is startUnderlay on the cluster spec describes.
func startUnderlaySpec(t *testing.T, spec clusterSpec) (*underlayWorld, context.Context) {
	t.Helper()
	cl, ctx := startClusterWith(t, spec)
	site, err := cl.c.AddSite(ctx, harness.SiteOptions{VLAN: 100, Gateway: siteGW, Device: siteDevice, LAN: siteLAN})
	if err != nil {
		t.Fatalf("site: %v", err)
	}
	if _, err := site.InRouter(ctx, "ip", "addr", "add", siteFar.String()+"/32", "dev", "lo"); err != nil {
		t.Fatal(err)
	}
	for i, e := range cl.hosts {
		addr := fmt.Sprintf("198.51.100.%d/24", 11+i)
		if out, err := e.rig.Run(ctx, "ip", "addr", "add", addr, "dev", harness.SiteNIC); err != nil {
			t.Fatalf("%s: %v %s", cl.names[i], err, out)
		}
		if out, err := e.rig.Run(ctx, "ip", "route", "add", "198.18.0.0/15", "via", siteLAN.Addr().String(), "dev", harness.SiteNIC); err != nil {
			t.Fatalf("%s: %v %s", cl.names[i], err, out)
		}
	}
	dyn, err := dynamic.NewForConfig(cl.c.Central.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	w := &underlayWorld{cl: cl, site: site, dyn: dyn, pns: dyn.Resource(kubeovn.ProviderNetworkResource),
		vlans: dyn.Resource(kubeovn.VlanResource), subnets: dyn.Resource(kubeovn.SubnetResource)}
	waitCondition(ctx, t, w.subnets, "ovn-default", kubeovn.ConditionReady, "True", "")
	return w, ctx
}

// pinger is a ping from a host, every 10 ms, counted when stopped.
type pinger struct {
	cmd *exec.Cmd
	out strings.Builder
}

func startPinger(t *testing.T, netns string, to netip.Addr) *pinger {
	t.Helper()
	p := &pinger{}
	p.cmd = exec.Command("ip", "netns", "exec", netns, "ping", "-i", "0.01", "-W", "1", to.String())
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	return p
}

var pingStats = rx.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// stop ends the ping (SIGINT: it prints its statistics) and returns sent and lost.
func (p *pinger) stop(t *testing.T) (sent, lost int) {
	t.Helper()
	_ = p.cmd.Process.Signal(os.Interrupt)
	_ = p.cmd.Wait()
	m := pingStats.FindStringSubmatch(p.out.String())
	if m == nil {
		t.Fatalf("no ping statistics: %s", p.out.String())
	}
	sent, _ = strconv.Atoi(m[1])
	got, _ := strconv.Atoi(m[2])
	return sent, sent - got
}

// hostView is what a host has on its site NIC and bridge: addresses and routes.
func hostView(ctx context.Context, t *testing.T, e *env) string {
	t.Helper()
	var b strings.Builder
	for _, args := range [][]string{{"-4", "-br", "addr"}, {"-4", "route"}} {
		out, err := e.rig.Run(ctx, "ip", args...)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

// pnReady waits until the ProviderNetwork lists every node ready.
func (w *underlayWorld) pnReady(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	var last any
	eventually(ctx, t, "provider network "+name+" ready on every node", func() bool {
		pn := w.pn(ctx, t, name)
		last = pn.Status
		return pn.Status.Ready && len(pn.Status.ReadyNodes) == len(w.cl.hosts)
	})
	t.Logf("provider network %s: %+v", name, last)
}

func (w *underlayWorld) pn(ctx context.Context, t *testing.T, name string) *kubeovn.ProviderNetwork {
	t.Helper()
	u, err := w.pns.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pn, err := kubeovn.ProviderNetworkFrom(u)
	if err != nil {
		t.Fatal(err)
	}
	return pn
}

func (w *underlayWorld) underlayPod(ctx context.Context, t *testing.T, host int, name, subnet string) *podsim.Sandbox {
	t.Helper()
	e := w.cl.hosts[host]
	pod, err := e.kubelet.CreatePod(ctx, "default", name, map[string]string{"ovn.kubernetes.io/logical_switch": subnet})
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
	return sb
}

// capture counts the packets matching filter on iface in the site switch's namespace (or,
// with a host, on that host) while do runs.
func capture(ctx context.Context, t *testing.T, netns, iface, filter string, do func()) int {
	n, _ := captureOut(ctx, t, netns, iface, filter, do)
	return n
}

// geneveOf is a tcpdump filter for the Geneve packets that carry traffic of the addresses:
// the inner packet's, not the tunnel's (other ports' packets, an IPv6 router solicitation of
// a host's join port, may cross Geneve at any time).
func geneveOf(addrs ...netip.Addr) string {
	hosts := make([]string, len(addrs))
	for i, a := range addrs {
		hosts[i] = "host " + a.String()
	}
	return "geneve and (" + strings.Join(hosts, " or ") + ")"
}

// untaggedICMP counts the ICMP packets without an 802.1Q header in tcpdump -e output.
func untaggedICMP(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "ICMP") && !strings.Contains(l, "802.1Q") {
			n++
		}
	}
	return n
}

// captureOut is capture with tcpdump's output.
func captureOut(ctx context.Context, t *testing.T, netns, iface, filter string, do func()) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", netns, "timeout", "-s", "INT", "4", "tcpdump", "-e", "-nn", "-l", "-i", iface, filter)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // tcpdump attaches
	do()
	_ = cmd.Wait()
	m := rx.MustCompile(`(\d+) packets captured`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("tcpdump on %s: %s", iface, out.String())
	}
	n, _ := strconv.Atoi(m[1])
	t.Logf("tcpdump -i %s %q: %d packets; first lines:\n%s", iface, filter, n, firstLines(out.String(), 3))
	return n, out.String()
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func reMatch(s, expr string) bool { return regexpMust(expr).MatchString(s) }

func netipIn(addr, prefix string) bool { return strings.HasPrefix(addr, prefix) }

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }

func regexpMust(expr string) *rx.Regexp { return rx.MustCompile(expr) }

// pnNotReady waits until the ProviderNetwork has each node not ready with a message holding
// one of msgs (one per node).
func (w *underlayWorld) pnNotReady(ctx context.Context, t *testing.T, name string, msgs ...string) {
	t.Helper()
	var last any
	eventually(ctx, t, "provider network "+name+" not ready: "+strings.Join(msgs, "; "), func() bool {
		pn := w.pn(ctx, t, name)
		last = pn.Status
		for _, m := range msgs {
			found := false
			for _, c := range pn.Status.Conditions {
				found = found || c.Type == kubeovn.ConditionReady && c.Status == "False" && strings.Contains(c.Message, m)
			}
			if !found {
				return false
			}
		}
		return !pn.Status.Ready && len(pn.Status.NotReadyNodes) >= len(msgs)
	})
	t.Logf("provider network %s: %+v", name, last)
}

// createYAML creates the object and returns the API server's answer.
func createYAML(ctx context.Context, res dynamic.NamespaceableResourceInterface, doc string) error {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return err
	}
	_, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	return err
}
