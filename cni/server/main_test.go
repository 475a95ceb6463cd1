package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// isolatedEnv marks the re-executed test process that runs in its own network namespace.
const isolatedEnv = "EDGEOVN_CNI_SERVER_TEST_ISOLATED"

// pluginBin is the CNI binary built for the tests; empty with pluginErr set when it could
// not be built.
var (
	pluginBin string
	pluginErr error
)

// TestMain re-runs the tests, as root, in a fresh network namespace: the server creates host
// veths in its own namespace, and the test's must never land in the machine's.
func TestMain(m *testing.M) {
	if os.Geteuid() == 0 && os.Getenv(isolatedEnv) == "" {
		os.Exit(reexecIsolated())
	}
	if os.Geteuid() != 0 {
		os.Exit(m.Run()) // the tests that need the binary skip
	}
	dir, err := os.MkdirTemp("", "edgeovn-cni-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pluginBin, pluginErr = buildPlugin(dir)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func reexecIsolated() int {
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), isolatedEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "run tests in a new network namespace:", err)
		return 1
	}
	return 0
}

// buildPlugin builds the CNI binary as /opt/cni/bin/edgeovn would be, named "edgeovn".
func buildPlugin(dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go tool not on PATH: %w", err)
	}
	bin := filepath.Join(dir, "edgeovn")
	out, err := exec.Command(goBin, "build", "-o", bin, "github.com/edgeovn/edgeovn/cni/cmd/edgeovn-cni").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build edgeovn-cni: %w\n%s", err, out)
	}
	return bin, nil
}

func needPlugin(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root for network namespaces and veths")
	}
	if pluginErr != nil {
		skip.Now(t, "CNI binary unavailable: %v", pluginErr)
	}
	return pluginBin
}
