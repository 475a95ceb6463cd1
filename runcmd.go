package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"k8s.io/klog/v2"

	"github.com/edgeovn/edgeovn/agent"
	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/node/health"
	"github.com/edgeovn/edgeovn/agent/startup"
	"github.com/edgeovn/edgeovn/systemd"
)

// runDaemon is `edgeovn run`: the node role always, the controller role while holding the
// Lease, until SIGINT or SIGTERM; SIGHUP reloads the BGP options (reload.go).
func runDaemon(args []string, stderr io.Writer) error {
	phases := startup.Begin()
	o, err := parseOptions(parseRequest{name: "edgeovn run", args: args, stderr: stderr, defaults: defaultOptions("info")})
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, o.LogLevel)
	if err != nil {
		return err
	}
	cfg := o.Config
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	klog.SetSlogLogger(log.With("component", "client-go")) // one log format, one level
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	notifier := systemd.NewNotifier(log)
	log.Info("edgeovn starting", "version", version, "node", cfg.NodeName, "cluster_cidr", cfg.ClusterCIDR.String())
	phases.Mark("config")
	onChange := func(err error) {
		// The record is written before READY=1, so a supervisor that saw READY finds it.
		if err == nil && phases.Done("ready") {
			log.LogAttrs(ctx, slog.LevelInfo, "startup phases", phases.Attrs()...)
		}
		notifier.Health(err)
	}
	monitor := health.NewMonitor(health.MonitorRequest{OnChange: onChange, Log: log.With("role", "node")})
	go func() { _ = notifier.Watchdog(ctx, monitor.Alive) }()
	bgpReload := make(chan config.BGP)
	go reloadOnHUP(ctx, reloadRequest{args: args, running: cfg, out: bgpReload, log: log})
	err = agent.Run(ctx, cfg, agent.Hooks{Health: monitor, Startup: phases, BGPReload: bgpReload}, log)
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
