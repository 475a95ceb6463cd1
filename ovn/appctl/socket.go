package appctl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultRunDir is Open vSwitch's run directory as packaged (Debian, RPM).
const DefaultRunDir = "/var/run/openvswitch"

// RunDir is the run directory of the Open vSwitch whose database endpoint is given: the
// directory of a "unix:" socket (ovs-vswitchd's control socket sits beside it), else
// DefaultRunDir.
func RunDir(ovsEndpoint string) string {
	if path, ok := strings.CutPrefix(ovsEndpoint, "unix:"); ok && filepath.IsAbs(path) {
		return filepath.Dir(path)
	}
	return DefaultRunDir
}

// ControlSocket returns ovs-vswitchd's control socket in rundir: "ovs-vswitchd.<pid>.ctl",
// the name it uses by default (pid from its pid file), or "ovs-vswitchd.ctl", the name a
// --unixctl option gives it in a private run directory. The daemon may have restarted since
// the last call: callers look it up again for each use.
func ControlSocket(rundir string) (string, error) {
	var tried []string
	if b, err := os.ReadFile(filepath.Join(rundir, "ovs-vswitchd.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			p := filepath.Join(rundir, fmt.Sprintf("ovs-vswitchd.%d.ctl", pid))
			if isSocket(p) {
				return p, nil
			}
			tried = append(tried, p)
		}
	}
	p := filepath.Join(rundir, "ovs-vswitchd.ctl")
	if isSocket(p) {
		return p, nil
	}
	tried = append(tried, p)
	return "", fmt.Errorf("find ovs-vswitchd's control socket in %s (tried %s): %w", rundir, strings.Join(tried, ", "), os.ErrNotExist)
}

func isSocket(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}
