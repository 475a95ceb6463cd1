package server

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// ErrSocketInUse means another process already serves the socket path.
var ErrSocketInUse = errors.New("cni socket in use")

// listen creates the unix socket at path, root-only.
func listen(path string) (net.Listener, error) {
	if err := socketDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// The directory is 0700 too, so the moment between Listen and Chmod exposes nothing.
	if err := os.Chmod(path, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("restrict %s to root: %w", path, err)
	}
	return ln, nil
}

// socketDir creates the socket's directory root-only (0700), or accepts an existing one
// only if nobody but its owner, this process's user, can write to it: whoever can write
// there can replace the socket with one of their own. /run/edgeovn (RuntimeDirectory=,
// mode 0700) is the normal case; a shared directory like /tmp is refused.
func socketDir(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create socket directory %s: %w", dir, err)
		}
		if err := os.Chmod(dir, 0o700); err != nil { // MkdirAll's mode passes through umask
			return fmt.Errorf("restrict socket directory %s to root: %w", dir, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("inspect socket directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("socket directory %s is not a directory", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("socket directory %s: no owner information", dir)
	}
	if int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("socket directory %s (owner uid %d, mode %v) is writable by others than uid %d: use a root-only directory such as /run/edgeovn",
			dir, st.Uid, fi.Mode().Perm(), os.Geteuid())
	}
	return nil
}

// removeStale removes a socket left behind by a daemon that died. A socket something still
// answers on, or a path that is not a socket, is left alone and reported.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("inspect %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket (mode %v); not replacing it", path, fi.Mode())
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		_ = c.Close()
		return fmt.Errorf("%s: %w", path, ErrSocketInUse)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// checkPassed holds a socket systemd created (edgeovn.socket) to the rules of one Serve
// creates: its directory writable by nobody but this process's user, the socket root-only.
// A socket unit without SocketMode=0600 is tightened, and the change logged.
func checkPassed(path string, log *slog.Logger) error {
	if err := socketDir(filepath.Dir(path)); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("inspect passed socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("passed socket %s: the path is not a socket (mode %v)", path, fi.Mode())
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("restrict passed socket %s to root: %w", path, err)
	}
	log.Warn("passed cni socket was open to others: restricted to root (set SocketMode=0600 in edgeovn.socket)", "socket", path, "mode", fi.Mode().Perm().String())
	return nil
}
