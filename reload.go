package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"syscall"

	"github.com/edgeovn/edgeovn/agent/config"
)

// reloadRequest is what reloadOnHUP needs.
type reloadRequest struct {
	args    []string      // run's command line, as at the start
	running config.Config // the options the daemon started with (validated)
	out     chan<- config.BGP
	log     *slog.Logger
}

// reloadOnHUP reads run's options again (the config file, under the same flags) at each
// SIGHUP (`systemctl reload edgeovn`) until ctx ends, and hands their BGP options to out: the
// node role starts, stops or restarts its speaker with them. A file that does not parse or
// validate is refused, naming what is wrong, and nothing changes. The other options are read
// only at start: a change to them is logged as waiting for a restart.
func reloadOnHUP(ctx context.Context, req reloadRequest) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		bgp, others, err := readBGP(req.args, req.running)
		if err != nil {
			req.log.Error("config reload refused, nothing changed", "err", err)
			continue
		}
		if others {
			req.log.Warn("config reload: options other than BGP's changed; they take effect at the next restart")
		}
		req.log.Info("config reloaded: BGP options handed to the node role")
		select {
		case req.out <- bgp:
		case <-ctx.Done():
			return
		}
	}
}

// readBGP parses and validates run's options from args as at the start, and returns their BGP
// options, and whether any other option differs from running's.
func readBGP(args []string, running config.Config) (config.BGP, bool, error) {
	o, err := parseOptions(parseRequest{name: "edgeovn run", args: args, stderr: io.Discard, defaults: defaultOptions("info")})
	if err != nil {
		return config.BGP{}, false, err
	}
	cfg := o.Config
	if err := cfg.Validate(); err != nil {
		return config.BGP{}, false, fmt.Errorf("invalid configuration: %w", err)
	}
	bgp := cfg.BGP
	cfg.BGP, running.BGP = config.BGP{}, config.BGP{}
	return bgp, !reflect.DeepEqual(cfg, running), nil
}
