package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

const (
	node     = "edge-1"
	hostAddr = "198.51.100.11"
	router   = "198.51.100.1"
	peer2    = "198.51.100.2" // gobgpd, the second peer (-peers 2), on the hosts' LAN
)

// world is one host on a site whose router runs FRR.
type world struct {
	c       *harness.Cluster
	bin     string
	daemon  *harness.Process
	kubelet *podsim.Kubelet
	frr     *harness.FRR
	gobgpd  *harness.GoBGPD // -peers 2
	frrDir  string
}

func startWorld(ctx context.Context, bin string) (*world, error) {
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: 1})
	if err != nil {
		return nil, err
	}
	w := &world{c: c, bin: bin}
	if err := w.start(ctx, nil); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *world) close() {
	w.c.Stop()
	if w.frrDir != "" {
		_ = os.RemoveAll(w.frrDir)
	}
}

// start starts edgeovn with flags and waits until the node is ready.
func (w *world) start(ctx context.Context, flags []string) error {
	h := w.c.Hosts[0]
	var err error
	if w.daemon, err = daemon.Start(ctx, h, daemon.Spec{Node: node, BinDir: w.bin, Extra: flags}); err != nil {
		return err
	}
	w.kubelet = daemon.Kubelet(h, node)
	if err := w.kubelet.EnsureNode(ctx); err != nil {
		return err
	}
	return w.kubelet.WaitReady(ctx)
}

// enableBGP builds the site and FRR (and, with peers 2, gobgpd in a namespace of its own on
// the LAN), and restarts edgeovn with them as neighbours.
func (w *world) enableBGP(ctx context.Context, peers int) error {
	site, err := w.c.AddSite(ctx, harness.SiteOptions{Gateway: netip.MustParsePrefix("192.0.2.1/24"),
		Device: netip.MustParsePrefix("192.0.2.200/24"), LAN: netip.MustParsePrefix(router + "/24")})
	if err != nil {
		return err
	}
	if out, err := w.c.Hosts[0].Run(ctx, "ip", "addr", "add", hostAddr+"/24", "dev", harness.SiteNIC); err != nil {
		return fmt.Errorf("host address: %w: %s", err, out)
	}
	if w.frrDir, err = os.MkdirTemp("", "bgpbench-frr-"); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(w.frrDir, "frr"), 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf("router bgp 65001\n bgp router-id %s\n no bgp ebgp-requires-policy\n neighbor %s remote-as 65000\n neighbor %s timers connect 1\n",
		router, hostAddr, hostAddr)
	if w.frr, err = site.StartFRR(ctx, harness.FRRSpec{Dir: filepath.Join(w.frrDir, "frr"), Netns: site.RouterNetns, BGPConfig: conf}); err != nil {
		return err
	}
	neighbors := router
	if peers > 1 {
		if err := w.startGoBGPD(ctx, site); err != nil {
			return err
		}
		neighbors += "," + peer2
	}
	if err := w.daemon.Stop(); err != nil {
		return err
	}
	if err := w.start(ctx, []string{"--neighbor-address=" + neighbors, "--neighbor-as=65001", "--cluster-as=65000"}); err != nil {
		return err
	}
	return until(ctx, func() bool {
		s, err := w.frr.PeerState(ctx, netip.MustParseAddr(hostAddr))
		if err != nil || s != "Established" {
			return false
		}
		if w.gobgpd == nil {
			return true
		}
		up, err := w.gobgpd.Established(ctx, netip.MustParseAddr(hostAddr))
		return err == nil && up
	})
}

// startGoBGPD runs gobgpd (AS 65001 too: edgeovn has one neighbor-as) at peer2 on the LAN.
func (w *world) startGoBGPD(ctx context.Context, site *harness.Site) error {
	ns, err := site.AddLANHost(ctx, "peer2", netip.MustParsePrefix(peer2+"/24"))
	if err != nil {
		return err
	}
	dir := filepath.Join(w.frrDir, "gobgpd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	conf := fmt.Sprintf("[global.config]\n  as = 65001\n  router-id = %q\n  port = 179\n\n[[neighbors]]\n  [neighbors.config]\n    neighbor-address = %q\n    peer-as = 65000\n",
		peer2, hostAddr)
	w.gobgpd, err = site.StartGoBGPD(ctx, harness.GoBGPDSpec{Dir: dir, Netns: ns, Config: conf})
	return err
}

// measure runs n pods and times, for each, annotation -> route and deletion -> withdrawal.
func (w *world) measure(ctx context.Context, n int) (announce, withdraw []time.Duration, err error) {
	kube := w.c.Central.Kube()
	for i := range n {
		name := fmt.Sprintf("bench-%d", i)
		pod, err := w.kubelet.CreatePod(ctx, "default", name, nil)
		if err != nil {
			return nil, nil, err
		}
		sb, err := w.kubelet.RunSandbox(ctx, pod)
		if err != nil {
			return nil, nil, err
		}
		p := netip.PrefixFrom(sb.IP(), 32)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, bgp.Annotation, bgp.PolicyLocal)
		start := time.Now()
		if _, err := kube.CoreV1().Pods("default").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return nil, nil, err
		}
		if err := w.waitRoute(ctx, p, true); err != nil {
			return nil, nil, err
		}
		announce = append(announce, time.Since(start))
		start = time.Now()
		if err := w.kubelet.DeletePod(ctx, pod); err != nil {
			return nil, nil, err
		}
		if err := w.waitRoute(ctx, p, false); err != nil {
			return nil, nil, err
		}
		withdraw = append(withdraw, time.Since(start))
		_ = w.kubelet.StopSandbox(ctx, sb, true)
	}
	return announce, withdraw, nil
}

// waitRoute polls FRR's RIB (every 10 ms) until p is there (or gone).
func (w *world) waitRoute(ctx context.Context, p netip.Prefix, present bool) error {
	return until(ctx, func() bool {
		out, err := w.frr.Vtysh(ctx, "show ip bgp "+p.String()+" json")
		return err == nil && strings.Contains(string(out), `"paths"`) == present
	})
}

func until(ctx context.Context, cond func() bool) error {
	deadline, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-deadline.Done():
			return fmt.Errorf("timed out: %w", deadline.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// rss is edgeovn's resident set after settle, in KiB.
func (w *world) rss(ctx context.Context, settle time.Duration) (int, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(settle):
	}
	return benchkit.VmRSS(w.daemon.PID)
}

// speakerPID is the PID of edgeovn's edgeovn-bgp child, 0 if none runs.
func (w *world) speakerPID() int { return benchkit.ChildPID(w.daemon.PID, "edgeovn-bgp") }

// speakerRSS is the VmRSS (kB) of edgeovn's edgeovn-bgp child, 0 if none runs.
func (w *world) speakerRSS() int {
	pid := w.speakerPID()
	if pid == 0 {
		return 0
	}
	kb, _ := benchkit.VmRSS(pid)
	return kb
}

// loadavg is /proc/loadavg's three averages: the machine is shared.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
