package main

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/edgeovn/edgeovn/agent/node"
	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// ovsConnectTimeout bounds the wait for the Open_vSwitch database during cleanup: on a purge
// it may be stopped already.
const ovsConnectTimeout = 5 * time.Second

// runCleanup removes what edgeovn put on the host: the package scripts call it (remove:
// --cni; purge: --all), and so can a person. It takes run's flags (so the scripts pass
// $EDGEOVN_OPTS and find the same paths), reads the same config file, and changes nothing
// unless a part is selected.
func runCleanup(args []string, stdout, stderr io.Writer) error {
	var parts node.CleanupParts
	var all bool
	var stateDir string
	o, err := parseOptions(parseRequest{name: "edgeovn cleanup", args: args, stderr: stderr, defaults: defaultOptions("error"),
		own: func(fs *flag.FlagSet) {
			fs.BoolVar(&parts.CNI, "cni", false, "remove the CNI config, the edgeovn CNI plugin and the plugins edgeovn installed")
			fs.BoolVar(&parts.OVS, "ovs", false, "remove edgeovn's pod ports on br-int and the host's ovn0")
			fs.BoolVar(&parts.State, "state", false, "remove the state directory and the IPAM database")
			fs.BoolVar(&all, "all", false, "all of --cni, --ovs and --state (what purging the package does)")
			fs.StringVar(&stateDir, "state-dir", "/var/lib/edgeovn", "edgeovn's state directory")
		}})
	if err != nil {
		return err
	}
	if all {
		parts = node.CleanupParts{CNI: true, OVS: true, State: true}
	}
	log, err := newLogger(stderr, o.LogLevel)
	if err != nil {
		return err
	}
	cfg := o.Config
	return node.Cleanup(context.Background(), node.CleanupRequest{
		CNIConfDir: cfg.CNIConfDir, CNIBinDir: cfg.CNIBinDir, CNISocket: cfg.CNISocket,
		StateDir: stateDir, IPAMDatabase: cfg.IPAMDatabase, Remove: parts, Out: stdout,
		OVS: func(ctx context.Context) (node.CleanupOVS, error) {
			ctx, cancel := context.WithTimeout(ctx, ovsConnectTimeout)
			defer cancel()
			c, err := vswitch.Connect(ctx, ovn.ConnectRequest{Endpoints: []string{cfg.OVSEndpoint}, Log: log})
			if err != nil {
				return nil, err
			}
			return c, nil
		}})
}
