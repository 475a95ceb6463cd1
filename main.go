package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: edgeovn <command> [flags]

commands:
  run       run the daemon: node role always, controller role while holding the Lease
  status    this host's role, the controller's host, readiness, databases, subnets (read-only)
  doctor    check this host's edgeovn, OVS and OVN, say how to fix what is wrong (read-only)
  ipam      print the IPAM database's allocations (read-only)
  cleanup   list, or with --cni/--ovs/--state/--all remove, what edgeovn put on this host
  version   print the version
run, status, doctor and cleanup read /etc/edgeovn/config.yaml (--config); flags override it.
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
	case "status":
		err = runStatus(args[1:], stdout, stderr)
	case "doctor":
		err = runDoctor(args[1:], stdout, stderr)
	case "ipam":
		err = runIPAM(args[1:], stdout, stderr)
	case "cleanup":
		err = runCleanup(args[1:], stdout, stderr)
	case "version":
		err = runVersion(args[1:], stdout, stderr)
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

// runVersion is `edgeovn version`: it takes no flags but -h.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("edgeovn version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "edgeovn", version)
	return nil
}
