package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunCommands(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"no command", nil, 2, "", "usage: edgeovn"},
		{"unknown command", []string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "edgeovn dev", ""},
		{"bad flag value", []string{"run", "--cluster-cidr=10.42.0.0/33"}, 1, "", "cluster-cidr"},
		{"invalid config", []string{"run", "--node-name=n1", "--mtu=10"}, 1, "", "mtu 10: outside 576..9000"},
		{"bad log level", []string{"run", "--log-level=loud"}, 1, "", `log-level "loud"`},
		{"ipam on a directory", []string{"ipam", "--db", "/"}, 1, "", "edgeovn:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(c.args, &out, &errb)
			if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
				t.Fatalf("run(%q) = %d\nstdout: %s\nstderr: %s\nwant %d, stdout ~ %q, stderr ~ %q",
					c.args, code, out.String(), errb.String(), c.code, c.out, c.err)
			}
		})
	}
}

// TestIPAMCommandCreatesNothing: `edgeovn ipam` reads; a mistyped path is an error, not a new
// empty database.
func TestIPAMCommandCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	var out, errb bytes.Buffer
	if code := run([]string{"ipam", "--db", path}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no such file") {
		t.Fatalf("ipam on a missing database: code %d, stderr %s", code, errb.String())
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ipam created %s: %v", path, err)
	}
}

// TestCleanupTakesRunFlags: the package scripts pass $EDGEOVN_OPTS, written for run, to
// cleanup; every run flag must parse there.
func TestCleanupTakesRunFlags(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"cleanup", "--cni", "--log-level=debug", "--cluster-cidr=10.42.0.0/16", "--node-name=n1",
		"--cni-conf-dir=" + dir, "--cni-bin-dir=" + dir, "--cni-socket=" + filepath.Join(dir, "cni.sock")}, &out, &errb)
	if code != 0 {
		t.Fatalf("cleanup with run's flags: code %d\n%s%s", code, out.String(), errb.String())
	}
}

// TestHelpOnEveryCommand: `-h` on any subcommand prints that command's usage once, on
// stderr as the flag package does, and exits 0; it is never reported as a failed check or a
// bad configuration (doctor said "[FAIL] config" and exited 1).
func TestHelpOnEveryCommand(t *testing.T) {
	for _, cmd := range []string{"run", "status", "doctor", "ipam", "cleanup", "version"} {
		for _, flag := range []string{"-h", "--help"} {
			t.Run(cmd+flag, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := run([]string{cmd, flag}, &out, &errb)
				usage := "Usage of edgeovn " + cmd
				if code != 0 || strings.Count(errb.String(), usage) != 1 || strings.Contains(out.String(), "FAIL") {
					t.Fatalf("edgeovn %s %s: code %d, want 0 and %q once\nstdout: %s\nstderr: %s", cmd, flag, code, usage, out.String(), errb.String())
				}
			})
		}
	}
}
