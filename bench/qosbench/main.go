// Command qosbench measures pod bandwidth limits (Kube-OVN's ingress_rate and egress_rate
// annotations) on a harness.Cluster: for each configured rate (1, 10, 100 Mbit/s), TCP and
// UDP (offered at twice the rate), and each direction (ingress_rate on the receiving pod,
// egress_rate on the sending pod), the rate iperf3's receiver achieved and its ratio to the
// configured one; then the time from an annotation change (a patch acknowledged by the API
// server) to the new limit being in force in the pod's namespace, over several rounds.
// With -hosts 2 the receiving pod is on the second host (Geneve).
//
//	go run ./bench/qosbench -bin bin      (as root, after make build; needs iperf3)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// Request is what a run measures.
type Request struct {
	Bin     string
	Hosts   int
	Seconds float64 // iperf3 seconds per measurement
	Changes int     // annotation changes timed
}

func main() {
	var req Request
	benchkit.BinFlag(&req.Bin)
	flag.IntVar(&req.Hosts, "hosts", 1, "1: both pods on one host; 2: the receiver on another host")
	flag.Float64Var(&req.Seconds, "seconds", 4, "iperf3 seconds per measurement")
	flag.IntVar(&req.Changes, "changes", 10, "annotation changes timed")
	flag.Parse()
	if err := run(req); err != nil {
		fmt.Fprintln(os.Stderr, "qosbench:", err)
		os.Exit(1)
	}
}

func run(req Request) error {
	if req.Hosts < 1 || req.Hosts > 2 {
		return fmt.Errorf("-hosts %d: want 1 or 2", req.Hosts)
	}
	if err := harness.PreflightCluster(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	w, err := startWorld(ctx, req.Bin, req.Hosts)
	if err != nil {
		return err
	}
	defer w.c.Stop()
	fmt.Printf("qosbench: %d host(s), iperf3 %g s per figure, receiver's rate\n\n", req.Hosts, req.Seconds)
	fmt.Printf("%-8s %-4s %12s %12s %7s\n", "limit on", "", "configured", "achieved", "ratio")
	for _, dir := range []string{"ingress", "egress"} {
		for _, proto := range []string{"TCP", "UDP"} {
			for _, mbit := range []float64{1, 10, 100} {
				got, err := w.limited(ctx, dir, proto == "UDP", mbit, req.Seconds)
				if err != nil {
					return err
				}
				fmt.Printf("%-8s %-4s %7g Mbit %7.2f Mbit %6.1f%%\n", dir, proto, mbit, got, got/mbit*100)
			}
		}
	}
	free, err := w.unlimited(ctx, req.Seconds)
	if err != nil {
		return err
	}
	fmt.Printf("%-8s %-4s %12s %7.2f Mbit\n\n", "none", "TCP", "-", free)
	took, err := w.changes(ctx, req.Changes)
	if err != nil {
		return err
	}
	fmt.Printf("annotation change to limit in force (egress_rate 10 <-> 20, %d changes): median %s, max %s\n",
		len(took), took.median(), took.max())
	return nil
}
