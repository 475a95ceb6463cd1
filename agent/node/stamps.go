package node

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// stamp is what a stat says of a file: enough to notice a replaced, removed, truncated,
// chmodded or rewritten file without reading it.
type stamp struct {
	exists bool
	ino    uint64
	size   int64
	mode   fs.FileMode
	mtime  time.Time
}

// stamps are the CNI files' stamps as last checked right; none before the first check.
type stamps map[string]stamp

func stampOf(path string) (stamp, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	st := stamp{exists: true, size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st, nil
}

// same reports whether every path still has the stamp taken last.
func (s stamps) same(paths []string) bool {
	if len(s) != len(paths) {
		return false
	}
	for _, p := range paths {
		st, err := stampOf(p)
		if err != nil || st != s[p] {
			return false
		}
	}
	return true
}

// take records the paths' stamps now.
func (s *stamps) take(paths []string) error {
	next := stamps{}
	var errs []error
	for _, p := range paths {
		st, err := stampOf(p)
		errs = append(errs, err)
		next[p] = st
	}
	if err := errors.Join(errs...); err != nil {
		*s = nil // check in full next time
		return err
	}
	*s = next
	return nil
}

// filePaths are the files edgeovn installs for the runtime.
func (r *Role) filePaths() []string {
	paths := []string{filepath.Join(r.req.CNIConfDir, ConfName), filepath.Join(r.req.CNIBinDir, PluginName),
		filepath.Join(r.req.CNIBinDir, ManifestName)}
	for _, p := range Plugins {
		paths = append(paths, filepath.Join(r.req.CNIBinDir, p))
	}
	return paths
}
