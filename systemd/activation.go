package systemd

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/coreos/go-systemd/v22/activation"
)

// ActivatedListener takes the sockets systemd passed this process (socket activation:
// LISTEN_PID naming this process, LISTEN_FDS counting descriptors from 3; see sd_listen_fds(3))
// and returns the one listening on the unix socket path, or nil when none was passed for it
// (no socket unit, or a daemon started by hand). The environment is cleared either way, so it
// is called once per process. A passed socket that is not a listening stream socket at path is
// closed and logged: serving a path the CNI config does not name would leave the runtime
// talking to nobody.
//
// The listener shares its socket with systemd: closing it leaves the socket bound and queueing
// connections for the next start, and never removes the path.
func ActivatedListener(path string, log *slog.Logger) (net.Listener, error) {
	var found net.Listener
	var errs []error
	for _, f := range activation.Files(true) {
		ln, err := net.FileListener(f)
		_ = f.Close() // FileListener holds its own duplicate
		if err != nil {
			errs = append(errs, fmt.Errorf("passed descriptor %s is not a listening socket: %w", f.Name(), err))
			continue
		}
		ul, ok := ln.(*net.UnixListener)
		if !ok || found != nil || filepath.Clean(ul.Addr().String()) != filepath.Clean(path) {
			log.Warn("ignoring a socket systemd passed: not the configured cni socket (edit edgeovn.socket's ListenStream= to match --cni-socket)",
				"passed", ln.Addr().String(), "cni_socket", path)
			_ = ln.Close()
			continue
		}
		ul.SetUnlinkOnClose(false)
		found = ul
	}
	if found != nil {
		log.Info("cni socket passed by systemd (socket activation)", "socket", path)
	}
	return found, errors.Join(errs...)
}
