// Command underlaybench measures Kube-OVN underlay networks on a harness.Cluster of two hosts
// plugged into a site (harness.AddSite: an OVS switch with the site's router and a device on
// VLAN 100): the pings a host loses through its own eth1 route while a ProviderNetwork takes
// eth1 into br-site, the time from the ProviderNetwork's creation to Ready on both hosts, the
// pings it loses through br-site while edgeovn is SIGKILLed and restarted, and,
// in the same run, ping p50/p99 and TCP throughput (iperf3) between pods on the two hosts over
// the underlay (VLAN 100 through the site switch), over Geneve, and from an underlay pod to an
// overlay pod through the cluster router (u2oInterconnection), alternating round by round.
//
//	go run ./bench/underlaybench -bin bin      (as root, after make build; needs iperf3)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/iperf"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Request is what a run measures.
type Request struct {
	Bin     string
	Rounds  int
	Pings   int
	Seconds int // iperf3 seconds per throughput round
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Rounds, "rounds", 3, "rounds per path, alternating underlay and Geneve")
	flag.IntVar(&req.Pings, "pings", 200, "pings per round, 10 ms apart")
	flag.IntVar(&req.Seconds, "seconds", 3, "iperf3 seconds per throughput round")
	flag.Parse()
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "underlaybench:", err)
		os.Exit(1)
	}
}

// path is one measured pair of pods.
type path struct {
	name     string
	from, to *podsim.Sandbox
	rtts     []time.Duration
	mbits    []float64
}

func run(req Request) error {
	if err := harness.PreflightCluster(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	w, err := startWorld(ctx, req.Bin)
	if err != nil {
		return err
	}
	defer w.c.Stop()
	fmt.Fprintln(os.Stderr, "cluster and site up; creating the ProviderNetwork")
	take, err := w.createProvider(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "provider network ready; starting pods")
	paths, err := w.pods(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "edgeovn SIGKILLed and restarted on host 1 under a host ping through br-site")
	restart, err := w.restart(ctx)
	if err != nil {
		return err
	}
	for round := range req.Rounds {
		for i := range paths {
			p := paths[(i+round)%len(paths)]
			fmt.Fprintln(os.Stderr, "round", round+1, p.name)
			if err := measure(ctx, p, req); err != nil {
				return fmt.Errorf("%s, round %d: %w", p.name, round+1, err)
			}
		}
	}
	printTable(req, take, restart, paths)
	return nil
}

func measure(ctx context.Context, p *path, req Request) error {
	rtts, err := benchkit.PingTimes(ctx, p.from.NetnsName(), p.to.IP(), req.Pings)
	if err != nil {
		return err
	}
	p.rtts = append(p.rtts, rtts...)
	res, err := iperf.Run(ctx, iperf.Request{ClientNetns: p.from.NetnsName(), ServerNetns: p.to.NetnsName(), Server: p.to.IP(), Seconds: float64(req.Seconds)})
	if err != nil {
		return err
	}
	p.mbits = append(p.mbits, res.Mbit)
	return nil
}

func printTable(req Request, take, restart takeover, paths []*path) {
	fmt.Printf("\nProviderNetwork on eth1 of 2 hosts: created -> Ready on both in %v; host pings through its eth1 route (10 ms apart) during the move: %d sent, %d lost\n",
		take.ready.Round(time.Millisecond), take.sent, take.lost)
	fmt.Printf("edgeovn SIGKILLed and restarted on host 1 (an underlay Subnet wired): node ready again in %v; host pings through br-site (10 ms apart) from the kill to 2 s after: %d sent, %d lost\n",
		restart.ready.Round(time.Millisecond), restart.sent, restart.lost)
	fmt.Printf("\nPod to pod across 2 hosts (userspace datapath), %d rounds per path: %d pings 10 ms apart and iperf3 %d s per round; load average %s\n",
		req.Rounds, req.Pings, req.Seconds, benchkit.LoadAvg())
	fmt.Println("| path | ping p50 | ping p99 | TCP Mbit/s, median | TCP Mbit/s, per round |")
	fmt.Println("|---|---:|---:|---:|---|")
	for _, p := range paths {
		fmt.Printf("| %s | %s | %s | %.0f | %s |\n", p.name, benchkit.Ms(benchkit.Pct(p.rtts, 50)), benchkit.Ms(benchkit.Pct(p.rtts, 99)),
			benchkit.Median(p.mbits), benchkit.Rounds(p.mbits))
	}
}
