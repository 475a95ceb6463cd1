package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const sampleConfig = "packaging/config.yaml"

// hermetic points the default config file at a temporary path and clears the environment
// the defaults read, so that a test sees only its own files.
func hermetic(t *testing.T) string {
	t.Helper()
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	path := filepath.Join(t.TempDir(), "config.yaml")
	old := defaultConfigFile
	defaultConfigFile = path
	t.Cleanup(func() { defaultConfigFile = old })
	return path
}

func parseRun(t *testing.T, args ...string) (options, error) {
	t.Helper()
	return parseOptions(parseRequest{name: "edgeovn run", args: args, stderr: io.Discard, defaults: defaultOptions("info")})
}

// optionLine is a commented-out option with its default in the sample: "# mtu: 1400".
var optionLine = regexp.MustCompile(`(?m)^# ([a-z][a-z0-9-]*):(.*)$`)

// TestSampleConfigIsTheDefaults: the shipped config.yaml parses to the defaults as shipped;
// with every documented default uncommented it still parses to the defaults (so what it
// says the defaults are is true, and every key it names exists); and it documents every
// option of run.
func TestSampleConfigIsTheDefaults(t *testing.T) {
	hermetic(t)
	want := defaultOptions("info")
	got, err := parseRun(t, "--config="+sampleConfig)
	if err != nil {
		t.Fatalf("the shipped config does not parse: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the shipped config changes the defaults:\n got %+v\nwant %+v", got, want)
	}
	sample, err := os.ReadFile(sampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	var uncommented bytes.Buffer
	for _, m := range optionLine.FindAllSubmatch(sample, -1) {
		documented[string(m[1])] = true
		if value := strings.TrimSpace(string(m[2])); value != "" { // host-dependent: no value shown
			uncommented.WriteString(string(m[1]) + ": " + value + "\n")
		}
	}
	explicit := filepath.Join(t.TempDir(), "uncommented.yaml")
	if err := os.WriteFile(explicit, uncommented.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = parseRun(t, "--config="+explicit)
	if err != nil {
		t.Fatalf("the sample's documented defaults do not parse: %v\n%s", err, uncommented.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the sample's documented defaults are not the defaults:\n got %+v\nwant %+v\n%s", got, want, uncommented.String())
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	o := defaultOptions("info")
	o.addFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if !documented[f.Name] {
			t.Errorf("option %s is not documented in %s", f.Name, sampleConfig)
		}
	})
}

// TestConfigPrecedence: a flag wins over the file, the file over the default; a list given
// by a flag replaces the file's list.
func TestConfigPrecedence(t *testing.T) {
	path := hermetic(t)
	file := "mtu: 1450\nservices: false\novn-nb: [tcp:10.0.0.1:6641, tcp:10.0.0.2:6641]\nlog-level: debug\ncni-timeout: 90s\n"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := parseRun(t, "--mtu=1500", "--ovn-nb=tcp:10.0.0.9:6641")
	if err != nil {
		t.Fatal(err)
	}
	if o.MTU != 1500 || strings.Join(o.NBEndpoints, " ") != "tcp:10.0.0.9:6641" {
		t.Errorf("flags did not win over the file: mtu %d, ovn-nb %v", o.MTU, o.NBEndpoints)
	}
	if o.Services || o.LogLevel != "debug" || o.CNITimeout.String() != "1m30s" {
		t.Errorf("the file did not win over the defaults: services %v, log-level %s, cni-timeout %s", o.Services, o.LogLevel, o.CNITimeout)
	}
	if d := defaultOptions("info"); o.ClusterCIDR != d.ClusterCIDR || o.IPAMDatabase != d.IPAMDatabase {
		t.Errorf("options in neither lost their defaults: %+v", o)
	}
	if o, err = parseRun(t); err != nil || strings.Join(o.NBEndpoints, " ") != "tcp:10.0.0.1:6641 tcp:10.0.0.2:6641" {
		t.Errorf("the file's list: %v, %v", o.NBEndpoints, err)
	}
	// ovn-sb is a list too; a single value, as older config files give it, is a list of one.
	for file, want := range map[string]string{
		"ovn-sb: [tcp:10.0.0.1:6642, tcp:10.0.0.2:6642]\n": "tcp:10.0.0.1:6642 tcp:10.0.0.2:6642",
		"ovn-sb: tcp:10.0.0.1:6642\n":                      "tcp:10.0.0.1:6642",
	} {
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		if o, err = parseRun(t); err != nil || strings.Join(o.SBEndpoints, " ") != want {
			t.Errorf("config %q: ovn-sb %v, %v; want %s", file, o.SBEndpoints, err, want)
		}
	}
}

// TestConfigFileErrors: a bad file stops `edgeovn run` before anything starts, with an error
// naming the key and the value; a missing default file is fine, a missing explicit one is not.
func TestConfigFileErrors(t *testing.T) {
	path := hermetic(t)
	cases := []struct{ name, file, want string }{
		{"unknown key", "node-name: n1\nclustr-cidr: 10.42.0.0/16\n", "line 2: clustr-cidr: unknown key"},
		{"bad value", "node-name: n1\ncluster-cidr: 10.42.0.0/33\n", `line 2: cluster-cidr: value "10.42.0.0/33"`},
		{"bad list element", "node-name: n1\nservice-cidr: [10.43.0.0/16, ten]\n", `service-cidr: value "ten"`},
		{"invalid option", "node-name: n1\nmtu: 10\n", "mtu 10: outside 576..9000"},
		{"invalid address", "node-name: n1\nmetrics-address: localhost\n", `metrics-address "localhost": want host:port`},
		{"a command's own flag", "node-name: n1\nconfig: /etc/other.yaml\n", "config: unknown key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := run([]string{"run"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), c.want) {
				t.Fatalf("run with %q: code %d, stderr %q, want 1 and %q", c.file, code, errb.String(), c.want)
			}
		})
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := parseRun(t); err != nil {
		t.Errorf("a missing default config file: %v", err)
	}
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	if _, err := parseRun(t, "--config="+missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing --config file: %v, want an error naming %s", err, missing)
	}
}
