package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/edgeovn/edgeovn/agent/bgp/speaker"
	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

func main() {
	os.Exit(run())
}

func run() int {
	level := flag.String("log-level", "info", "debug, info, warn or error")
	flag.Parse()
	var l slog.Level
	if err := l.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "edgeovn-bgp: log-level %q: %v\n", *level, err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})).With("component", "bgp-speaker")
	// The parent asked for SIGTERM at its death (Pdeathsig); if it died before that took
	// hold, this process was handed to another parent already.
	if p := os.Getenv(speakerproto.ParentEnv); p != "" && p != strconv.Itoa(os.Getppid()) {
		log.Error("edgeovn, which started this speaker, is gone", "parent", p)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := speaker.Serve(ctx, os.Stdin, os.Stdout, log); err != nil {
		log.Error("bgp speaker stopped", "err", err)
		return 1
	}
	return 0
}
