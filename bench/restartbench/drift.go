package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeovn/edgeovn/e2e/daemon"
)

// driftCase is one thing broken behind edgeovn's back and how to see it repaired.
type driftCase struct {
	name     string
	breakCmd []string
	repaired func(context.Context) bool
}

// benchDrift breaks each thing times times and times, from the break to the repair seen, how
// long edgeovn took (polled every 5 ms).
func benchDrift(ctx context.Context, n *node, times int) error {
	conf := filepath.Join(n.k.ConfDir, "01-edgeovn.conflist")
	want, err := os.ReadFile(conf)
	if err != nil {
		return err
	}
	cases := []driftCase{
		{"`nft flush ruleset` (masquerade gone)", []string{"nft", "flush", "ruleset"}, func(ctx context.Context) bool {
			_, err := n.rig.Run(ctx, "nft", "list", "table", "ip", "edgeovn")
			return err == nil
		}},
		{"ovn0's route to the pods deleted", []string{"ip", "route", "del", "10.42.0.0/16", "dev", "ovn0"}, func(ctx context.Context) bool {
			out, err := n.rig.Run(ctx, "ip", "route", "show", "10.42.0.0/16")
			return err == nil && strings.Contains(string(out), "dev ovn0")
		}},
		{"CNI config deleted", []string{"rm", conf}, func(context.Context) bool {
			got, err := os.ReadFile(conf)
			return err == nil && string(got) == string(want)
		}},
		{"ovn0 deleted from br-int (bound again)", []string{"ovs-vsctl", "--db=" + n.rig.OVSEndpoint, "del-port", "br-int", "ovn0"}, func(ctx context.Context) bool {
			out, err := n.rig.Run(ctx, "ip", "route", "show", "10.42.0.0/16")
			return err == nil && strings.Contains(string(out), "dev ovn0") && daemon.HostInterfaceBound(ctx, n.rig)
		}},
	}
	fmt.Printf("\nhost wiring broken %d times each way, time from the break to the repair seen (polled every 5 ms)\n\n", times)
	fmt.Println("| broken | repaired p50 | max |")
	fmt.Println("|---|---|---|")
	for _, c := range cases {
		var d []time.Duration
		for range times {
			took, err := repairTime(ctx, n, c)
			if err != nil {
				return err
			}
			d = append(d, took)
			time.Sleep(500 * time.Millisecond) // let the next break meet a settled node
		}
		fmt.Printf("| %s | %s | %s |\n", c.name, ms(pct(d, 50)), ms(pct(d, 100)))
	}
	return nil
}

func repairTime(ctx context.Context, n *node, c driftCase) (time.Duration, error) {
	start := time.Now()
	if out, err := n.rig.Run(ctx, c.breakCmd[0], c.breakCmd[1:]...); err != nil {
		return 0, fmt.Errorf("%s: %w\n%s", c.name, err, out)
	}
	for !c.repaired(ctx) {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s: not repaired: %w", c.name, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return time.Since(start), nil
}
