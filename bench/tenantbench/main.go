package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/edgeovn/edgeovn/e2e/benchkit"
	"github.com/edgeovn/edgeovn/e2e/harness"
)

// config is the command line.
type config struct {
	bin    string
	pods   int    // pods of each part (API objects with addresses and OVN ports, no sandbox)
	groups int    // security groups the first part's pods are spread over
	vpcs   int    // custom VPCs the second part's pods are spread over, against 1
	rounds int    // rule changes each way
	only   string // "sg", "vpc" or "" (both)
	keep   bool
}

func (c config) validate() error {
	switch {
	case c.pods < 1:
		return fmt.Errorf("-pods %d: want at least 1", c.pods)
	case c.groups < 1:
		return fmt.Errorf("-groups %d: want at least 1", c.groups)
	case c.vpcs < 2 || c.vpcs > 100:
		return fmt.Errorf("-vpcs %d: want 2-100 (compared against 1)", c.vpcs)
	case c.rounds < 1:
		return fmt.Errorf("-rounds %d: want at least 1", c.rounds)
	case c.only != "" && c.only != "sg" && c.only != "vpc":
		return fmt.Errorf("-only %q: want sg or vpc", c.only)
	}
	return nil
}

func main() {
	var c config
	benchkit.BinFlag(&c.bin)
	flag.IntVar(&c.pods, "pods", 500, "pods of each part (API objects with addresses and OVN ports, no sandbox)")
	flag.IntVar(&c.groups, "groups", 10, "security groups the pods are spread over")
	flag.IntVar(&c.vpcs, "vpcs", 5, "custom VPCs the pods are spread over, against all of them in 1")
	flag.IntVar(&c.rounds, "rounds", 40, "security group rule changes timed each way (added, removed), one after the other (40: p95 is not the max)")
	flag.StringVar(&c.only, "only", "", "run one part only: sg (rule change to effect) or vpc (rows and northd CPU)")
	flag.BoolVar(&c.keep, "keep", false, "keep the rigs' directories (logs, databases) and print where they are")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "tenantbench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if err := c.validate(); err != nil {
		return err
	}
	if err := harness.Preflight(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	fmt.Printf("tenantbench: edgeovn %s, load average at start %s\n", c.bin, benchkit.LoadAvg())
	var errs []error
	if c.only != "vpc" {
		r, err := runSecurityGroups(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("security groups: %w", err))
		} else {
			r.print(c)
		}
	}
	if c.only != "sg" {
		one, err := runVpcs(ctx, c, 1)
		if err != nil {
			errs = append(errs, fmt.Errorf("1 VPC: %w", err))
		}
		many, err2 := runVpcs(ctx, c, c.vpcs)
		if err2 != nil {
			errs = append(errs, fmt.Errorf("%d VPCs: %w", c.vpcs, err2))
		}
		if err == nil && err2 == nil {
			printVpcs(c, one, many)
		}
	}
	fmt.Printf("\ntenantbench took %.0f s; load average at the end %s\n", time.Since(start).Seconds(), benchkit.LoadAvg())
	return errors.Join(errs...)
}
