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
// containernetworking/plugins): the runtime runs loopback for every sandbox's lo. With k3s's
// flannel disabled nobody else puts it in the CNI bin dir. macvlan is for Multus NADs with
// edgeovn as their IPAM ("ipam": {"type": "kube-ovn"}, docs/attachments.md).
var Plugins = []string{"loopback", "macvlan"}

// RetiredPlugins are plugins older edgeovn versions shipped and installed: portmap, chained
// for hostPort until the daemon served it. One edgeovn installed (recorded in the manifest,
// content unchanged) is removed; one another package installed is left alone.
var RetiredPlugins = []string{"portmap"}

// pluginInstall says where the plugins come from and go.
type pluginInstall struct {
	SourceDir string // holds the shipped plugins (beside edgeovn-cni)
	BinDir    string // the runtime's CNI bin dir
	Log       *slog.Logger
}

// installPlugins copies each shipped plugin into the bin dir unless one of that name is
// already there that edgeovn did not install (manifest.go): a plugin another package
// installed (Debian's containernetworking-plugins) is never replaced, while one edgeovn
// installed is upgraded when the shipped one changes. A plugin edgeovn does not ship is
// reported, not an error: the node works without hostPort, and the runtime names a missing
// loopback itself. It returns the plugins present in the bin dir afterwards, and whether it wrote.
func installPlugins(req pluginInstall) (pluginsPresent, error) {
	m, err := readManifest(req.BinDir)
	if err != nil {
		return pluginsPresent{}, err
	}
	present := map[string]bool{}
	changed := false
	for _, name := range Plugins {
		wrote, err := installPlugin(req, m, name, present)
		if err != nil {
			return pluginsPresent{}, err
		}
		changed = changed || wrote
	}
	for _, name := range RetiredPlugins {
		removed, err := removeRetired(req, m, name)
		if err != nil {
			return pluginsPresent{}, err
		}
		changed = changed || removed
	}
	if changed {
		if err := m.write(req.BinDir); err != nil {
			return pluginsPresent{}, fmt.Errorf("record installed cni plugins: %w", err)
		}
	}
	return pluginsPresent{has: present, wrote: changed}, nil
}

// pluginsPresent: which plugins the bin dir has, and whether installPlugins wrote any.
type pluginsPresent struct {
	has   map[string]bool
	wrote bool
}

// installPlugin installs or upgrades one plugin and records it in m; it reports whether it
// wrote.
func installPlugin(req pluginInstall, m manifest, name string, present map[string]bool) (bool, error) {
	dst := filepath.Join(req.BinDir, name)
	_, statErr := os.Stat(dst)
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return false, fmt.Errorf("check cni plugin %s: %w", dst, statErr)
	}
	exists := statErr == nil
	ours := false
	if exists {
		var err error
		if ours, err = m.owns(req.BinDir, name); err != nil {
			return false, err
		}
		if !ours {
			present[name] = true
			return false, nil
		}
	}
	src := filepath.Join(req.SourceDir, name)
	data, err := os.ReadFile(src)
	if errors.Is(err, fs.ErrNotExist) {
		present[name] = exists
		if !exists {
			req.Log.Warn("cni plugin not shipped beside edgeovn-cni and not installed", "plugin", name, "looked_in", req.SourceDir, "bin_dir", req.BinDir)
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read cni plugin %s: %w", src, err)
	}
	present[name] = true
	if ours && m[name] == digest(data) {
		return false, nil // ours and current
	}
	if _, err := writeFileAtomic(dst, data, 0o755); err != nil {
		return false, fmt.Errorf("install cni plugin %s: %w", name, err)
	}
	m[name] = digest(data)
	if ours {
		req.Log.Info("upgraded cni plugin", "plugin", name, "path", dst)
	} else {
		req.Log.Info("installed cni plugin", "plugin", name, "path", dst)
	}
	return true, nil
}

// removeRetired removes a retired plugin edgeovn installed and drops it from m; it reports
// whether it changed anything.
func removeRetired(req pluginInstall, m manifest, name string) (bool, error) {
	if _, listed := m[name]; !listed {
		return false, nil
	}
	ours, err := m.owns(req.BinDir, name)
	if err != nil {
		return false, err
	}
	delete(m, name)
	if !ours {
		return true, nil // replaced since by another package's, or gone: only the record goes
	}
	path := filepath.Join(req.BinDir, name)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove retired cni plugin %s: %w", path, err)
	}
	req.Log.Info("removed cni plugin edgeovn no longer ships", "plugin", name, "path", path)
	return true, nil
}
