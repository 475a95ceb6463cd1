package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/edgeovn/edgeovn/agent/inspect"
)

// statusTimeout bounds each line of `edgeovn status`.
const statusTimeout = 5 * time.Second

// runStatus is `edgeovn status`: this host's role, the controller Lease's holder, readiness,
// the databases' connection state and the subnets' usage, read only. It reads the config file
// and takes run's flags.
func runStatus(args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(parseRequest{name: "edgeovn status", args: args, stderr: stderr, defaults: defaultOptions("error")})
	if err != nil {
		return err
	}
	if err := o.Config.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	log, err := newLogger(stderr, o.LogLevel)
	if err != nil {
		return err
	}
	h := inspect.NewHost(o.Config, log)
	defer h.Close()
	return h.Status(context.Background(), stdout, statusTimeout)
}
