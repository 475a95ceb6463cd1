package node

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// Plugins are the reference CNI plugins edgeovn ships beside its own (built from
// containernetworking/plugins): the runtime runs loopback for every sandbox's lo, and portmap,
// chained after edgeovn, serves hostPort. With k3s's flannel disabled nobody else puts them
// in the CNI bin dir.
var Plugins = []string{"loopback", "portmap"}

// pluginInstall says where the plugins come from and go.
type pluginInstall struct {
	SourceDir string // holds the shipped plugins (beside edgeovn-cni)
	BinDir    string // the runtime's CNI bin dir
	Log       *slog.Logger
}

// installPlugins copies each shipped plugin into the bin dir unless one of that name is
// already there: a plugin another package installed (Debian's containernetworking-plugins,
// an older edgeovn) is never replaced. A plugin edgeovn does not ship is reported, not an
// error: the node works without hostPort, and the runtime names a missing loopback itself.
// It returns the plugins present in the bin dir afterwards.
func installPlugins(req pluginInstall) (map[string]bool, error) {
	present := map[string]bool{}
	for _, name := range Plugins {
		dst := filepath.Join(req.BinDir, name)
		if _, err := os.Stat(dst); err == nil {
			present[name] = true
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("check cni plugin %s: %w", dst, err)
		}
		src := filepath.Join(req.SourceDir, name)
		data, err := os.ReadFile(src)
		if errors.Is(err, fs.ErrNotExist) {
			req.Log.Warn("cni plugin not shipped beside edgeovn-cni and not installed", "plugin", name, "looked_in", req.SourceDir, "bin_dir", req.BinDir)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read cni plugin %s: %w", src, err)
		}
		if _, err := writeFileAtomic(dst, data, 0o755); err != nil {
			return nil, fmt.Errorf("install cni plugin %s: %w", name, err)
		}
		req.Log.Info("installed cni plugin", "plugin", name, "path", dst)
		present[name] = true
	}
	return present, nil
}
