package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	var cfg config
	cfg.addFlags(flag.CommandLine)
	child := flag.String("open-child", "", "internal: open and load this database, print the time taken")
	flag.Parse()
	run := run
	if *child != "" {
		run = func(ctx context.Context, _ config, out io.Writer) error { return openChild(ctx, *child, out) }
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ipambench:", err)
		os.Exit(1)
	}
}
