package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/bgp"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

const (
	node     = "edge-1"
	hostAddr = "198.51.100.11"
	router   = "198.51.100.1"
)

// world is one host on a site whose router runs FRR.
type world struct {
	c       *harness.Cluster
	bin     string
	daemon  *harness.Process
	kubelet *podsim.Kubelet
	frr     *harness.FRR
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

// enableBGP builds the site and FRR, and restarts edgeovn with the router as neighbour.
func (w *world) enableBGP(ctx context.Context) error {
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
	conf := fmt.Sprintf("router bgp 65001\n bgp router-id %s\n no bgp ebgp-requires-policy\n neighbor %s remote-as 65000\n neighbor %s timers connect 1\n",
		router, hostAddr, hostAddr)
	if w.frr, err = site.StartFRR(ctx, harness.FRRSpec{Dir: w.frrDir, Netns: site.RouterNetns, BGPConfig: conf}); err != nil {
		return err
	}
	if err := w.daemon.Stop(); err != nil {
		return err
	}
	if err := w.start(ctx, []string{"--neighbor-address=" + router, "--neighbor-as=65001", "--cluster-as=65000"}); err != nil {
		return err
	}
	return until(ctx, func() bool {
		s, err := w.frr.PeerState(ctx, netip.MustParseAddr(hostAddr))
		return err == nil && s == "Established"
	})
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
	deadline, cancel := context.WithTimeout(ctx, time.Minute)
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
	return vmRSS(w.daemon.PID)
}

// speakerRSS is the VmRSS (kB) of edgeovn's edgeovn-bgp child, 0 if none runs.
func (w *world) speakerRSS() int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(b)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open || s[open+1:closing] != "edgeovn-bgp" {
			continue
		}
		if fs := strings.Fields(s[closing+1:]); len(fs) > 1 && fs[1] == strconv.Itoa(w.daemon.PID) {
			pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
			kb, _ := vmRSS(pid)
			return kb
		}
	}
	return 0
}

func vmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			return strconv.Atoi(f[1])
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

// loadavg is /proc/loadavg's three averages: the machine is shared.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}
