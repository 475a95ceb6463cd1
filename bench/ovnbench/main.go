package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/ovn/nbbench"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "ovnbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	name string
	fn   func(*testing.B)
	unit string // the metric to show besides time per op
}

func run(out io.Writer, args []string) error {
	fs := flag.NewFlagSet("ovnbench", flag.ContinueOnError)
	ports := fs.Int("ports", 10000, "pod ports in the database for the start-up benchmark")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("needs root (it starts its own ovsdb-server)")
	}
	benches := []bench{
		{"pod port create, 1 per transaction", nbbench.PortCreateSingle, "ports/s"},
		{fmt.Sprintf("pod port create, %d per transaction", nbbench.Batch), nbbench.PortCreateBatched, "ports/s"},
		{"EnsureCluster + 50 EnsureSubnet", nbbench.ClusterAnd50Subnets, ""},
		{fmt.Sprintf("Connect with %d ports (start-up load)", *ports), func(b *testing.B) { nbbench.Startup(b, *ports) }, "MiB-cache"},
	}
	fmt.Fprintln(out, "| benchmark | iterations | time per op | metric |")
	fmt.Fprintln(out, "|---|---:|---:|---:|")
	for _, bm := range benches {
		r := testing.Benchmark(bm.fn)
		if r.N == 0 {
			return fmt.Errorf("benchmark %q failed or was skipped", bm.name)
		}
		metric := ""
		if bm.unit != "" {
			metric = fmt.Sprintf("%.1f %s", r.Extra[bm.unit], bm.unit)
		}
		perOp := time.Duration(r.NsPerOp())
		fmt.Fprintf(out, "| %s | %d | %v | %s |\n", bm.name, r.N, perOp.Round(time.Microsecond), metric)
	}
	return nil
}
