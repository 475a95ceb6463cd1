package main

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/iperf"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// The dual-stack cluster, and the outside network of both families behind the host (no
// route back to the pods: their traffic reaches it masqueraded).
const (
	clusterCIDR = "10.42.0.0/16,2001:cafe:42::/56"
	outsideNS   = "v6bench-out"
)

var (
	outside4, outsideHost4 = netip.MustParsePrefix("203.0.113.2/24"), netip.MustParsePrefix("203.0.113.1/24")
	outside6, outsideHost6 = netip.MustParsePrefix("2001:db8:100::2/64"), netip.MustParsePrefix("2001:db8:100::1/64")
)

// Request is what a run measures.
type Request struct {
	Bin     string
	Rounds  int
	Seconds int // iperf3 seconds per round and path
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Rounds, "rounds", 3, "rounds; each measures every path once, the order alternating")
	flag.IntVar(&req.Seconds, "seconds", 3, "iperf3 seconds per round and path")
	flag.Parse()
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "v6bench:", err)
		os.Exit(1)
	}
}

// path is one measured client, server and address.
type path struct {
	name           string
	client, server string // network namespace paths
	addr           netip.Addr
	mbits          []float64
}

func run(req Request) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	if _, err := exec.LookPath("iperf3"); err != nil {
		return fmt.Errorf("iperf3 not found: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{})
	if err != nil {
		return err
	}
	defer rig.Stop()
	a, b, err := startPods(ctx, rig, req.Bin)
	if err != nil {
		return err
	}
	defer func() { _ = podsim.RemoveNetns(a.Netns); _ = podsim.RemoveNetns(b.Netns) }()
	out, err := addOutside(ctx, rig)
	if err != nil {
		return err
	}
	defer func() { _ = exec.Command("ip", "netns", "delete", outsideNS).Run() }()
	b6, err := ip6(b)
	if err != nil {
		return err
	}
	paths := []*path{
		{name: "pod to pod, IPv4", client: a.Netns, server: b.Netns, addr: b.IP()},
		{name: "pod to pod, IPv6", client: a.Netns, server: b.Netns, addr: b6},
		{name: "pod to outside, IPv4", client: a.Netns, server: out, addr: outside4.Addr()},
		{name: "pod to outside, IPv6", client: a.Netns, server: out, addr: outside6.Addr()},
	}
	for _, p := range paths {
		if err := warmUp(ctx, p); err != nil {
			return err
		}
	}
	for r := range req.Rounds {
		for i := range paths {
			p := paths[(i+r)%len(paths)] // each round starts one path later
			res, err := iperf.Run(ctx, iperf.Request{ClientNetns: p.client, ServerNetns: p.server, Server: p.addr, Seconds: float64(req.Seconds)})
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			p.mbits = append(p.mbits, res.Mbit)
		}
	}
	report(req, paths)
	return nil
}

func report(req Request, paths []*path) {
	fmt.Printf("\nTCP throughput (iperf3, %d s, %d rounds alternating), one dual-stack edgeovn (cluster %s), userspace datapath\n\n",
		req.Seconds, req.Rounds, clusterCIDR)
	fmt.Printf("%-24s %14s   %s\n", "path", "median Mbit/s", "rounds")
	for _, p := range paths {
		fmt.Printf("%-24s %14.0f   %s\n", p.name, benchkit.Median(p.mbits), benchkit.Rounds(p.mbits))
	}
	fmt.Println()
	for i := 0; i+1 < len(paths); i += 2 {
		v4, v6 := benchkit.Median(paths[i].mbits), benchkit.Median(paths[i+1].mbits)
		fmt.Printf("%s: IPv6 / IPv4 %.2fx\n", strings.TrimSuffix(paths[i].name, ", IPv4"), v6/v4)
	}
}

// startPods starts edgeovn with the dual-stack cluster CIDR and two pods on its host.
func startPods(ctx context.Context, rig *harness.Rig, bin string) (*podsim.Sandbox, *podsim.Sandbox, error) {
	k := daemon.Kubelet(rig, "bench-1")
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: k.Node, BinDir: bin, Extra: []string{"--log-level=warn", "--cluster-cidr=" + clusterCIDR}}); err != nil {
		return nil, nil, err
	}
	if err := k.EnsureNode(ctx); err != nil {
		return nil, nil, err
	}
	if err := k.WaitReady(ctx); err != nil {
		return nil, nil, err
	}
	var sbs []*podsim.Sandbox
	for _, name := range []string{"iperf-a", "iperf-b"} {
		pod, err := k.CreatePod(ctx, "default", name, nil)
		if err != nil {
			return nil, nil, err
		}
		sb, err := k.RunSandbox(ctx, pod)
		if err != nil {
			return nil, nil, err
		}
		sbs = append(sbs, sb)
	}
	return sbs[0], sbs[1], nil
}

// ip6 is the sandbox's IPv6 address.
func ip6(sb *podsim.Sandbox) (netip.Addr, error) {
	for _, ip := range sb.IPs() {
		if ip.Is6() {
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("pod %s has no IPv6 address: %v", sb.Pod.Name, sb.IPs())
}

// addOutside connects the host to a namespace holding an address of each family, whose only
// routes are those prefixes, and returns its path.
func addOutside(ctx context.Context, rig *harness.Rig) (string, error) {
	steps := [][]string{
		{"netns", "add", outsideNS},
		{"link", "add", "v6bench", "netns", rig.Netns, "type", "veth", "peer", "name", "eth0", "netns", outsideNS},
		{"-n", rig.Netns, "addr", "add", outsideHost4.String(), "dev", "v6bench"},
		{"-n", rig.Netns, "addr", "add", outsideHost6.String(), "dev", "v6bench", "nodad"},
		{"-n", rig.Netns, "link", "set", "v6bench", "up"},
		{"-n", outsideNS, "addr", "add", outside4.String(), "dev", "eth0"},
		{"-n", outsideNS, "addr", "add", outside6.String(), "dev", "eth0", "nodad"},
		{"-n", outsideNS, "link", "set", "eth0", "up"},
		{"-n", outsideNS, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, "ip", s...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("ip %s: %w: %s", strings.Join(s, " "), err, out)
		}
	}
	return "/var/run/netns/" + outsideNS, nil
}

// warmUp pings until replies come: the datapath drops first packets while it resolves
// neighbours.
func warmUp(ctx context.Context, p *path) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := exec.CommandContext(ctx, "nsenter", "--net="+p.client, "ping", "-c", "1", "-W", "1", p.addr.String()).CombinedOutput()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s does not answer ping: %v\n%s", p.name, p.addr, err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
