package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/config/configfile"
)

// defaultConfigFile is the package's conffile; a missing one is fine (every option has a
// default), a missing file named with --config is not. A variable for the tests.
var defaultConfigFile = "/etc/edgeovn/config.yaml"

// options are what the config file and run's flags set: the daemon's Config and the log
// level. Every command that acts on this host's edgeovn (run, cleanup, status, doctor) takes
// them, so they find the same sockets, databases and directories as the daemon.
type options struct {
	config.Config
	LogLevel string
}

func defaultOptions(level string) options {
	return options{Config: config.Default(), LogLevel: level}
}

func (o *options) addFlags(fs *flag.FlagSet) {
	o.Config.AddFlags(fs)
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "debug, info, warn or error")
}

// clone copies o without sharing its lists, which flags and Validate write to.
func (o options) clone() options {
	o.NBEndpoints = slices.Clone(o.NBEndpoints)
	o.SBEndpoints = slices.Clone(o.SBEndpoints)
	o.ServiceCIDRs = slices.Clone(o.ServiceCIDRs)
	return o
}

// parseRequest says how one command reads its options.
type parseRequest struct {
	name     string // "edgeovn run"
	args     []string
	stderr   io.Writer
	defaults options
	// own binds the command's own flags (cleanup's --all), which the file cannot set.
	own func(*flag.FlagSet)
}

// parseOptions layers the defaults, the config file (--config, default defaultConfigFile)
// and the command line, in that order: a flag wins over the file, the file over the default.
// A bad flag, an unreadable or bad file is an error naming it; the result is not validated.
func parseOptions(req parseRequest) (options, error) {
	// First pass: which file, and are the flags well-formed (usage is printed once, here).
	probe := newFlagSet(req.name, req.stderr)
	scratch := req.defaults.clone()
	path := bindAll(probe, &scratch, req.own)
	if err := probe.Parse(req.args); err != nil {
		return options{}, err
	}
	explicit := false
	probe.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "config" })

	o := req.defaults.clone()
	if err := applyConfigFile(&o, *path, explicit); err != nil {
		return options{}, err
	}
	final := newFlagSet(req.name, req.stderr)
	bindAll(final, &o, req.own)
	if err := final.Parse(req.args); err != nil {
		return options{}, err
	}
	return o, nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func bindAll(fs *flag.FlagSet, o *options, own func(*flag.FlagSet)) *string {
	o.addFlags(fs)
	path := fs.String("config", defaultConfigFile, "YAML file of options (keys are these flags' names); flags override it")
	if own != nil {
		own(fs)
	}
	return path
}

// applyConfigFile sets o's options from the YAML file at path.
func applyConfigFile(o *options, path string, explicit bool) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read config file: %w", err)
	}
	fileFlags := newFlagSet("config", io.Discard)
	o.addFlags(fileFlags)
	return configfile.Apply(fileFlags, path, data)
}
