// Command mirrorbench measures the throughput cost of traffic mirroring: TCP (iperf3) from a
// pod, same host and across two hosts (userspace datapath, Geneve), with the pod not mirrored,
// mirrored to mirror0 (ovn.kubernetes.io/mirror: "true") with nobody reading it, and mirrored
// with tcpdump reading mirror0, alternating round by round.
//
//	go run ./bench/mirrorbench -bin bin      (as root, after make build; needs iperf3 and tcpdump)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/edgeovn/edgeovn/agent/annotation"
	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/iperf"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Request is what a run measures.
type Request struct {
	Bin     string
	Rounds  int
	Seconds int
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Rounds, "rounds", 3, "rounds per path and mode")
	flag.IntVar(&req.Seconds, "seconds", 3, "iperf3 seconds per round")
	flag.Parse()
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "mirrorbench:", err)
		os.Exit(1)
	}
}

// The modes measured.
var modes = []string{"not mirrored", "mirrored, mirror0 unread", "mirrored, tcpdump on mirror0"}

type path struct {
	name     string
	from, to *podsim.Sandbox
	mbits    map[string][]float64 // by mode
}

func run(req Request) error {
	if err := harness.PreflightCluster(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c, err := harness.StartCluster(ctx, harness.ClusterOptions{Hosts: 2})
	if err != nil {
		return err
	}
	defer c.Stop()
	var kubelets []*podsim.Kubelet
	for i, h := range c.Hosts {
		node := fmt.Sprintf("edge-%d", i+1)
		if _, err := daemon.Start(ctx, h, daemon.Spec{Node: node, BinDir: req.Bin}); err != nil {
			return err
		}
		k := daemon.Kubelet(h, node)
		if err := k.EnsureNode(ctx); err != nil {
			return err
		}
		kubelets = append(kubelets, k)
	}
	var sbs []*podsim.Sandbox
	for i, host := range []int{0, 0, 1} {
		if err := kubelets[host].WaitReady(ctx); err != nil {
			return err
		}
		pod, err := kubelets[host].CreatePod(ctx, "default", fmt.Sprintf("m%d", i), nil)
		if err != nil {
			return err
		}
		sb, err := kubelets[host].RunSandbox(ctx, pod)
		if err != nil {
			return err
		}
		sbs = append(sbs, sb)
	}
	paths := []*path{{name: "same host", from: sbs[0], to: sbs[1]}, {name: "across hosts (Geneve)", from: sbs[0], to: sbs[2]}}
	for _, p := range paths {
		p.mbits = map[string][]float64{}
		if err := benchkit.WarmUp(ctx, p.from, p.to.IP()); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
	}
	for round := range req.Rounds {
		for mi := range modes {
			mode := modes[(mi+round)%len(modes)]
			fmt.Fprintln(os.Stderr, "round", round+1, mode)
			if err := setMode(ctx, c, sbs[0], mode); err != nil {
				return err
			}
			for _, p := range paths {
				res, err := iperf.Run(ctx, iperf.Request{ClientNetns: p.from.NetnsName(), ServerNetns: p.to.NetnsName(), Server: p.to.IP(), Seconds: float64(req.Seconds)})
				if err != nil {
					return fmt.Errorf("%s, %s: %w", p.name, mode, err)
				}
				p.mbits[mode] = append(p.mbits[mode], res.Mbit)
			}
			stopCapture()
		}
	}
	printTable(req, paths)
	return nil
}

// capture is the tcpdump of the current round, if any.
var capture *exec.Cmd

func stopCapture() {
	if capture != nil {
		_ = capture.Process.Signal(os.Interrupt)
		_ = capture.Wait()
		capture = nil
	}
}

// setMode annotates (or not) the pod and waits until host 1's Mirror row says so; with
// tcpdump, starts it on mirror0 (writing to /dev/null).
func setMode(ctx context.Context, c *harness.Cluster, sb *podsim.Sandbox, mode string) error {
	on := mode != modes[0]
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation.Mirror: strconv.FormatBool(on)}}})
	if _, err := c.Central.Kube().CoreV1().Pods("default").Patch(ctx, sb.Pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	h := c.Hosts[0]
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := h.Run(ctx, "ovs-vsctl", "--db="+h.OVSEndpoint, "--bare", "--columns=select_src_port", "list", "Mirror")
		link, lerr := h.Run(ctx, "ip", "link", "show", "mirror0")
		mirrored := strings.TrimSpace(string(out)) != "" && lerr == nil && strings.Contains(string(link), ",UP")
		if mirrored == on {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mirror of %s not %v after 20 s", sb.Pod.Name, on)
		}
	}
	if mode == modes[2] {
		capture = exec.CommandContext(ctx, "ip", "netns", "exec", h.Netns, "tcpdump", "-n", "-q", "-i", "mirror0", "-w", "/dev/null")
		if err := capture.Start(); err != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond) // tcpdump attaches
	}
	return nil
}

func printTable(req Request, paths []*path) {
	fmt.Printf("\nTCP from a pod (iperf3 %d s, %d rounds per mode, modes alternating), userspace datapath; load average %s\n", req.Seconds, req.Rounds, benchkit.LoadAvg())
	fmt.Println("| path | mode | TCP Mbit/s, median | per round | vs not mirrored |")
	fmt.Println("|---|---|---:|---|---:|")
	for _, p := range paths {
		base := benchkit.Median(p.mbits[modes[0]])
		for _, m := range modes {
			med := benchkit.Median(p.mbits[m])
			fmt.Printf("| %s | %s | %.0f | %s | %.0f%% |\n", p.name, m, med, benchkit.Rounds(p.mbits[m]), 100*med/base)
		}
	}
}
