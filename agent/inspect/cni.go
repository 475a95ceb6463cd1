package inspect

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// confExtensions are the files libcni (and so containerd) reads from the conf dir.
var confExtensions = []string{".conf", ".conflist", ".json"}

// loadedConf returns the config file containerd loads from dir: the first, in name order, of
// the files with a CNI config extension; "" when there is none.
func loadedConf(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("read cni conf dir %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && slices.Contains(confExtensions, filepath.Ext(e.Name())) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "", nil
	}
	return names[0], nil
}

// confList is the part of a conflist the doctor reads.
type confList struct {
	Plugins []struct {
		Type         string `json:"type"`
		ServerSocket string `json:"serverSocket"`
	} `json:"plugins"`
}

// checkConfList says what is wrong with the conflist at path for a daemon on socket, or nil.
func checkConfList(path, plugin, socket string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c confList
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%s does not parse: %w", path, err)
	}
	if len(c.Plugins) == 0 || c.Plugins[0].Type != plugin {
		return fmt.Errorf("%s: the first plugin is not %q", path, plugin)
	}
	if c.Plugins[0].ServerSocket != socket {
		return fmt.Errorf("%s: the plugin calls %q, the daemon listens on %q", path, c.Plugins[0].ServerSocket, socket)
	}
	return nil
}

// missingExecutables lists the names not present as executable files in dir.
func missingExecutables(dir string, names ...string) []string {
	var missing []string
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, n)
		}
	}
	return missing
}

func joinOr(s []string, none string) string {
	if len(s) == 0 {
		return none
	}
	return strings.Join(s, ", ")
}
