package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/edgeovn/edgeovn/agent/inspect"
)

// runDoctor is `edgeovn doctor`: every check a person would do by hand on this host, read
// only, each failure with its fix; an error (exit code 1) when any check fails. It reads the
// config file and takes run's flags, so it checks what the daemon uses.
func runDoctor(args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(parseRequest{name: "edgeovn doctor", args: args, stderr: stderr, defaults: defaultOptions("error")})
	if errors.Is(err, flag.ErrHelp) {
		return err // the usage is printed; asking for it is not a failed check
	}
	if err == nil {
		err = o.Config.Validate()
	}
	if err != nil {
		fmt.Fprintf(stdout, "[FAIL] %-22s %v\n       %-22s fix: correct it, then `edgeovn doctor` again\n", "config", err, "")
		return fmt.Errorf("the configuration is not valid")
	}
	fmt.Fprintf(stdout, "[  ok] %-22s %s\n", "config", configSource(args))
	log, err := newLogger(stderr, o.LogLevel)
	if err != nil {
		return err
	}
	h := inspect.NewHost(o.Config, log)
	defer h.Close()
	checks := h.Checks()
	if failed := inspect.Report(context.Background(), stdout, checks, inspect.CheckTimeout); failed > 0 {
		return fmt.Errorf("%d of %d checks failed", failed, len(checks)+1)
	}
	return nil
}

// configSource says where the options came from, for the doctor's first line.
func configSource(args []string) string {
	path := defaultConfigFile
	probe := newFlagSet("", io.Discard)
	scratch := defaultOptions("")
	p := bindAll(probe, &scratch, nil)
	if probe.Parse(args) == nil {
		path = *p
	}
	if _, err := os.Stat(path); err != nil {
		return "defaults and flags (no " + path + ")"
	}
	return path + " and flags"
}
