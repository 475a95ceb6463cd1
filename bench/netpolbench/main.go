package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/daemon"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

func main() {
	var bin string
	benchkit.BinFlag(&bin)
	policies := flag.Int("policies", 100, "NetworkPolicies, spread over the namespaces")
	pods := flag.Int("pods", 500, "pods (API objects with addresses and OVN ports, no sandbox)")
	namespaces := flag.Int("namespaces", 10, "namespaces the pods and policies are spread over")
	flips := flag.Int("flips", 10, "label changes timed one after the other (each way)")
	flag.Parse()
	if err := run(bin, scale{policies: *policies, pods: *pods, namespaces: *namespaces}, *flips); err != nil {
		fmt.Fprintln(os.Stderr, "netpolbench:", err)
		os.Exit(1)
	}
}

const node = "bench-1"

func run(bin string, sc scale, flips int) error {
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	rig, err := harness.Start(ctx, harness.Options{})
	if err != nil {
		return err
	}
	defer rig.Stop()
	b, err := newBench(ctx, rig)
	if err != nil {
		return err
	}
	defer b.close()
	if _, err := daemon.Start(ctx, rig, daemon.Spec{Node: node, BinDir: bin, Extra: []string{"--log-level=warn"}}); err != nil {
		return err
	}
	k := daemon.Kubelet(rig, node)
	if err := k.EnsureNode(ctx); err != nil {
		return err
	}
	if err := b.createPods(ctx, sc); err != nil {
		return err
	}
	prog, err := b.programPolicies(ctx, sc)
	if err != nil {
		return err
	}
	allow, deny, err := b.labelFlips(ctx, k, flips)
	if err != nil {
		return err
	}
	fmt.Printf("\nNetworkPolicy on one host (userspace datapath)\n\n")
	fmt.Println("| measure | result | goal |")
	fmt.Println("|---|---:|---|")
	fmt.Printf("| %d policies over %d pods (%d namespaces), first create to the last policy's ACLs in NB | %.2f s (%d ACLs, %d address sets, %d port groups) | |\n",
		sc.policies, sc.pods, sc.namespaces, prog.took.Seconds(), prog.acls, prog.sets, prog.groups)
	fmt.Printf("| pod label change to a TCP probe getting through, p50 / max (%d changes) | %s / %s | <= 1 s |\n", flips, benchkit.Ms(benchkit.Pct(allow, 50)), benchkit.Ms(benchkit.Pct(allow, 100)))
	fmt.Printf("| label change back to the probe blocked, p50 / max (probe timeout 100 ms) | %s / %s | |\n", benchkit.Ms(benchkit.Pct(deny, 50)), benchkit.Ms(benchkit.Pct(deny, 100)))
	return nil
}
