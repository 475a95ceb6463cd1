package main

import (
	"flag"
	"fmt"
	"os"
)

// config sizes the workloads; the defaults keep one run under a minute on a small machine.
type config struct {
	Dir        string // parent of the temporary working directory
	Serial     int    // allocations one after the other
	Concurrent int    // allocations in total from the concurrent allocators
	Workers    int    // concurrent allocators
	Load       int    // allocations in the database opened and loaded
	Runs       int    // repetitions of the open + load; the median is printed
	Fsyncs     int    // fsyncs timed for the floor
	Peer       int    // host-local allocations per workload (it slows down as its directory fills)
}

func (c *config) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Dir, "dir", os.TempDir(), "directory for the databases (use the IPAM's disk)")
	fs.IntVar(&c.Serial, "serial", 10000, "serial allocations")
	fs.IntVar(&c.Concurrent, "concurrent", 40000, "allocations in total from the concurrent allocators")
	fs.IntVar(&c.Workers, "workers", 64, "concurrent allocators")
	fs.IntVar(&c.Load, "load", 100000, "allocations in the database that is opened and loaded")
	fs.IntVar(&c.Runs, "runs", 3, "open + load repetitions (median printed)")
	fs.IntVar(&c.Fsyncs, "fsyncs", 1000, "fsyncs timed for the floor")
	fs.IntVar(&c.Peer, "peer", 1000, "host-local allocations per workload (its time grows with the square of this)")
}

func (c config) validate() error {
	for name, v := range map[string]int{"serial": c.Serial, "concurrent": c.Concurrent, "workers": c.Workers,
		"load": c.Load, "runs": c.Runs, "fsyncs": c.Fsyncs, "peer": c.Peer} {
		if v < 1 {
			return fmt.Errorf("-%s %d: want at least 1", name, v)
		}
	}
	return nil
}
