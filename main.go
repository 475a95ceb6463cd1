// Command edgeovn is the per-host daemon of edgeovn (subcommand run) and its diagnostics.
// main only wires: configuration, logging, signals and systemd notifications.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/edgeovn/edgeovn/agent"
	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/systemd"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: edgeovn <command> [flags]

commands:
  run       run the daemon: node role always, controller role while holding the Lease
  ipam      print the IPAM database's allocations (read-only)
  cleanup   list, or with --cni/--ovs/--state/--all remove, what edgeovn put on this host
  version   print the version
Run "edgeovn <command> -h" for a command's flags.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = runDaemon(args[1:], stderr)
	case "ipam":
		err = runIPAM(args[1:], stdout, stderr)
	case "cleanup":
		err = runCleanup(args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "edgeovn", version)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "edgeovn: unknown command %q\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "edgeovn:", err)
		return 1
	}
	return 0
}

func runDaemon(args []string, stderr io.Writer) error {
	cfg := agent.DefaultConfig()
	fs := flag.NewFlagSet("edgeovn run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.AddFlags(fs)
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, *level)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	klog.SetSlogLogger(log.With("component", "client-go")) // one log format, one level
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	notifier := systemd.NewNotifier(log)
	log.Info("edgeovn starting", "version", version, "node", cfg.NodeName, "cluster_cidr", cfg.ClusterCIDR.String())
	monitor := health.NewMonitor(health.MonitorRequest{OnChange: notifier.Health, Log: log.With("role", "node")})
	go func() { _ = notifier.Watchdog(ctx, monitor.Alive) }()
	err = agent.Run(ctx, cfg, agent.Hooks{Health: monitor}, log)
	notifier.Stopping()
	return err
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log-level %q: %w", level, err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
