package main

import (
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"regexp"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/edgeovn/edgeovn/agent/kubeovn"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// world is the cluster, its site and the kubeovn.io/v1 client.
type world struct {
	c        *harness.Cluster
	bin      string
	daemons  []*harness.Process
	site     *harness.Site
	kubelets []*podsim.Kubelet
	dyn      dynamic.Interface
}

// startWorld starts two hosts with edgeovn, the site (VLAN 100: router 192.0.2.1; untagged LAN
// 198.51.100.0/24, the router at .1 also holding 198.18.0.1), and gives each host's eth1 its
// LAN address and a route to 198.18.0.0/15 through the router.
func startWorld(ctx context.Context, bin string) (*world, error) {
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: 2})
	if err != nil {
		return nil, err
	}
	w := &world{c: c, bin: bin}
	if err := w.start(ctx, bin); err != nil {
		c.Stop()
		return nil, err
	}
	return w, nil
}

func (w *world) start(ctx context.Context, bin string) error {
	for i, h := range w.c.Hosts {
		node := fmt.Sprintf("edge-%d", i+1)
		p, err := daemon.Start(ctx, h, daemon.Spec{Node: node, BinDir: bin})
		if err != nil {
			return err
		}
		w.daemons = append(w.daemons, p)
		k := daemon.Kubelet(h, node)
		if err := k.EnsureNode(ctx); err != nil {
			return err
		}
		w.kubelets = append(w.kubelets, k)
	}
	for _, k := range w.kubelets {
		if err := k.WaitReady(ctx); err != nil {
			return fmt.Errorf("node %s: %w", k.Node, err)
		}
	}
	var err error
	w.site, err = w.c.AddSite(ctx, harness.SiteOptions{VLAN: 100, Gateway: netip.MustParsePrefix("192.0.2.1/24"),
		Device: netip.MustParsePrefix("192.0.2.200/24"), LAN: netip.MustParsePrefix("198.51.100.1/24")})
	if err != nil {
		return err
	}
	if _, err := w.site.InRouter(ctx, "ip", "addr", "add", "198.18.0.1/32", "dev", "lo"); err != nil {
		return err
	}
	for i, h := range w.c.Hosts {
		for _, args := range [][]string{{"addr", "add", fmt.Sprintf("198.51.100.%d/24", 11+i), "dev", harness.SiteNIC},
			{"route", "add", "198.18.0.0/15", "via", "198.51.100.1", "dev", harness.SiteNIC}} {
			if out, err := h.Run(ctx, "ip", args...); err != nil {
				return fmt.Errorf("host %d: ip %v: %w: %s", i+1, args, err, out)
			}
		}
	}
	w.dyn, err = dynamic.NewForConfig(w.c.Central.RESTConfig())
	return err
}

// takeover is what creating the ProviderNetwork cost.
type takeover struct {
	ready      time.Duration
	sent, lost int
}

var pingStats = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// hostPing is a ping from host 1 to 198.18.0.1 (through its eth1 route, or br-site's), 10 ms
// apart, counted when stopped.
type hostPing struct {
	cmd *exec.Cmd
	out *lockedBuffer
}

func (w *world) startHostPing(ctx context.Context) (*hostPing, error) {
	p := &hostPing{cmd: exec.CommandContext(ctx, "ip", "netns", "exec", w.c.Hosts[0].Netns, "ping", "-n", "-i", "0.01", "-W", "1", "198.18.0.1"),
		out: &lockedBuffer{}}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	time.Sleep(300 * time.Millisecond)
	return p, nil
}

// stop ends the ping and returns sent and lost.
func (p *hostPing) stop() (sent, lost int, err error) {
	_ = p.cmd.Process.Signal(interrupt)
	_ = p.cmd.Wait()
	m := pingStats.FindStringSubmatch(p.out.String())
	if m == nil {
		return 0, 0, fmt.Errorf("no ping statistics: %s", p.out.String())
	}
	sent, _ = strconv.Atoi(m[1])
	got, _ := strconv.Atoi(m[2])
	return sent, sent - got, nil
}

// restart SIGKILLs edgeovn on host 1 while it pings 198.18.0.1 through br-site (its underlay
// Subnet wired: ovn-controller's patch port on the bridge), starts it again, waits until the
// node is ready and 2 s more (its ProviderNetwork sync), and counts the pings.
func (w *world) restart(ctx context.Context) (takeover, error) {
	var t takeover
	ping, err := w.startHostPing(ctx)
	if err != nil {
		return t, err
	}
	start := time.Now()
	if err := w.daemons[0].Kill(); err != nil {
		return t, err
	}
	p, err := daemon.Start(ctx, w.c.Hosts[0], daemon.Spec{Name: "edgeovn-restarted", Node: w.kubelets[0].Node, BinDir: w.bin})
	if err != nil {
		return t, err
	}
	w.daemons[0] = p
	if err := w.kubelets[0].WaitReady(ctx); err != nil {
		return t, err
	}
	t.ready = time.Since(start)
	time.Sleep(2 * time.Second)
	t.sent, t.lost, err = ping.stop()
	return t, err
}

// createProvider creates ProviderNetwork site on eth1 while host 1 pings 198.18.0.1 through its
// eth1 route, waits until both nodes are ready, and counts the pings.
func (w *world) createProvider(ctx context.Context) (takeover, error) {
	var t takeover
	ping, err := w.startHostPing(ctx)
	if err != nil {
		return t, err
	}
	start := time.Now()
	if err := w.create(ctx, kubeovn.ProviderNetworkResource, map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "ProviderNetwork",
		"metadata": map[string]any{"name": "site"}, "spec": map[string]any{"defaultInterface": "eth1"}}); err != nil {
		return t, err
	}
	for {
		u, err := w.dyn.Resource(kubeovn.ProviderNetworkResource).Get(ctx, "site", metav1.GetOptions{})
		if err != nil {
			return t, err
		}
		if pn, err := kubeovn.ProviderNetworkFrom(u); err == nil && pn.Status.Ready && len(pn.Status.ReadyNodes) == 2 {
			break
		}
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.ready = time.Since(start)
	time.Sleep(500 * time.Millisecond)
	t.sent, t.lost, err = ping.stop()
	return t, err
}

// create creates the object.
func (w *world) create(ctx context.Context, gvr schema.GroupVersionResource, obj map[string]any) error {
	_, err := w.dyn.Resource(gvr).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create %s %v: %w", gvr.Resource, obj["metadata"], err)
	}
	return nil
}

// pods makes the underlay (Vlan 100, Subnet under, with u2oInterconnection) and the Geneve
// pairs, one pod of each on each host, and warms the three paths up: underlay, Geneve, and
// underlay pod to overlay pod through the cluster router (u2o).
func (w *world) pods(ctx context.Context) ([]*path, error) {
	if err := w.create(ctx, kubeovn.VlanResource, map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Vlan",
		"metadata": map[string]any{"name": "v100"}, "spec": map[string]any{"id": int64(100), "provider": "site"}}); err != nil {
		return nil, err
	}
	if err := w.create(ctx, kubeovn.SubnetResource, map[string]any{"apiVersion": "kubeovn.io/v1", "kind": "Subnet",
		"metadata": map[string]any{"name": "under"}, "spec": map[string]any{"cidrBlock": "192.0.2.0/24", "gateway": "192.0.2.1",
			"vlan": "v100", "excludeIps": []any{"192.0.2.200"}, "u2oInterconnection": true}}); err != nil {
		return nil, err
	}
	if err := w.subnetReady(ctx, "under"); err != nil {
		return nil, err
	}
	var sbs []*podsim.Sandbox
	for _, p := range []struct {
		name, subnet string
		host         int
	}{{"u1", "under", 0}, {"u2", "under", 1}, {"o1", "", 0}, {"o2", "", 1}} {
		sb, err := w.run(ctx, p.host, p.name, p.subnet)
		if err != nil {
			return nil, err
		}
		sbs = append(sbs, sb)
	}
	paths := []*path{{name: "underlay (VLAN 100, site switch)", from: sbs[0], to: sbs[1]}, {name: "overlay (Geneve)", from: sbs[2], to: sbs[3]},
		{name: "u2oInterconnection (underlay pod -> overlay pod on the other host)", from: sbs[0], to: sbs[3]}}
	for _, p := range paths {
		if err := benchkit.WarmUp(ctx, p.from, p.to.IP()); err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return paths, nil
}

// run starts a pod on host (on subnet, when set), retrying while the Subnet is being applied.
func (w *world) run(ctx context.Context, host int, name, subnet string) (*podsim.Sandbox, error) {
	var ann map[string]string
	if subnet != "" {
		ann = map[string]string{"ovn.kubernetes.io/logical_switch": subnet}
	}
	k := w.kubelets[host]
	pod, err := k.CreatePod(ctx, "default", name, ann)
	if err != nil {
		return nil, err
	}
	return k.RunSandbox(ctx, pod)
}

// subnetReady waits for the Subnet's Ready condition.
func (w *world) subnetReady(ctx context.Context, name string) error {
	for ctx.Err() == nil {
		u, err := w.dyn.Resource(kubeovn.SubnetResource).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if sn, err := kubeovn.FromUnstructured(u); err == nil && sn.IsReady() {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("subnet %s not ready: %w", name, ctx.Err())
}
