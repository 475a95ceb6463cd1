package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Daemon names an Open vSwitch or OVN daemon the way ovs-appctl -t finds it: its pid file
// <RunDir>/<Name>.pid and its control socket <RunDir>/<Name>.<pid>.ctl (or <Name>.ctl when
// it was started with --unixctl there).
type Daemon struct {
	Name   string // "ovs-vswitchd", "ovn-controller"
	RunDir string // $OVS_RUNDIR (/var/run/openvswitch) or $OVN_RUNDIR (/var/run/ovn)
}

// DefaultRunDirs are the run directories of the Debian and RPM packages, overridden by the
// environment variables the OVS and OVN tools read.
func DefaultRunDirs() (ovs, ovn string) {
	return envOr("OVS_RUNDIR", "/var/run/openvswitch"), envOr("OVN_RUNDIR", "/var/run/ovn")
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// Answers asks the daemon for its version over its control socket (unixctl JSON-RPC), which
// only a live daemon whose main loop runs can answer: a killed daemon leaves its pid file and
// socket file behind, but nothing accepts on the socket any more.
func (d Daemon) Answers(ctx context.Context) error {
	sock, err := d.socket()
	if err != nil {
		return err
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "unix", sock)
	if err != nil {
		return fmt.Errorf("%s not running: %w", d.Name, err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(DefaultCheckTimeout)
	}
	_ = conn.SetDeadline(deadline)
	if err := json.NewEncoder(conn).Encode(map[string]any{"method": "version", "params": []string{}, "id": 0}); err != nil {
		return fmt.Errorf("ask %s for its version at %s: %w", d.Name, sock, err)
	}
	var reply struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(conn).Decode(&reply); err != nil {
		return fmt.Errorf("%s not answering at %s: %w", d.Name, sock, err)
	}
	if len(reply.Result) == 0 || string(reply.Result) == "null" {
		return fmt.Errorf("%s at %s answered version with an error: %s", d.Name, sock, reply.Error)
	}
	return nil
}

// socket finds the control socket: by the pid in the pid file first, then the fixed name.
func (d Daemon) socket() (string, error) {
	pidFile := filepath.Join(d.RunDir, d.Name+".pid")
	b, err := os.ReadFile(pidFile)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s not running: no pid file %s", d.Name, pidFile)
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", pidFile, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return "", fmt.Errorf("%s: pid file %s holds %q, not a pid", d.Name, pidFile, strings.TrimSpace(string(b)))
	}
	for _, name := range []string{fmt.Sprintf("%s.%d.ctl", d.Name, pid), d.Name + ".ctl"} {
		p := filepath.Join(d.RunDir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s (pid %d) not running: no control socket %s.%d.ctl or %s.ctl in %s", d.Name, pid, d.Name, pid, d.Name, d.RunDir)
}
