package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ConfName sorts before the configs k3s and others write, so the runtime picks edgeovn's.
const ConfName = "01-edgeovn.conflist"

// PluginName is the CNI binary's name in the bin dir, the "type" of the config.
const PluginName = "edgeovn"

// conflist renders the CNI config: 1.0.0 for containerd 1.6, 1.1.0 offered to newer runtimes.
// edgeovn's plugin declares the portMappings capability and the daemon serves hostPort
// itself (hostnet.HostPorts): no portmap is chained, so no second plugin exec (and its
// netfilter probes) on the path of every pod.
func conflist(socket string) ([]byte, error) {
	plugins := []any{map[string]any{
		"type":         PluginName,
		"serverSocket": socket,
		"capabilities": map[string]bool{"portMappings": true},
	}}
	conf := map[string]any{
		"cniVersion":  "1.0.0",
		"cniVersions": []string{"1.0.0", "1.1.0"},
		"name":        "edgeovn",
		"plugins":     plugins,
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render cni config: %w", err)
	}
	return append(b, '\n'), nil
}

// writeFileAtomic replaces path with data unless it already holds exactly that; it reports
// whether it wrote.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if st, err := os.Stat(path); err == nil && st.Mode().Perm() == mode {
			return false, nil
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return false, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replace %s: %w", path, err)
	}
	return true, nil
}

// binarySource finds the CNI binary to install: the configured path, else edgeovn-cni next
// to the running executable (a build tree or a tarball).
func binarySource(configured string) (string, error) {
	if _, err := os.Stat(configured); err == nil {
		return configured, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find cni binary: %s missing and own path unknown: %w", configured, err)
	}
	beside := filepath.Join(filepath.Dir(self), "edgeovn-cni")
	if _, err := os.Stat(beside); err != nil {
		return "", fmt.Errorf("find cni binary: neither %s nor %s exists", configured, beside)
	}
	return beside, nil
}

// installBinary copies the CNI binary into binDir as PluginName.
func installBinary(source, binDir string) (bool, error) {
	data, err := os.ReadFile(source)
	if err != nil {
		return false, fmt.Errorf("read cni binary: %w", err)
	}
	return writeFileAtomic(filepath.Join(binDir, PluginName), data, 0o755)
}
