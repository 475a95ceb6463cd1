package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// KubeOVNPluginName is the name Kube-OVN's NetworkAttachmentDefinitions give the CNI plugin
// ("type": "kube-ovn"): edgeovn's binary answers to it too, through a symlink in the bin dir,
// so that Multus finds it for users' NADs unchanged. A symlink costs nothing when no NAD uses
// it.
const KubeOVNPluginName = "kube-ovn"

// linkKubeOVN makes binDir/kube-ovn a symlink to edgeovn's binary (relative, so the bin dir
// can move). A regular file already there (Kube-OVN's own binary) is left alone: an error
// says so. It reports whether it changed anything.
func linkKubeOVN(binDir string) (bool, error) {
	link := filepath.Join(binDir, KubeOVNPluginName)
	cur, err := os.Readlink(link)
	switch {
	case err == nil && cur == PluginName:
		return false, nil
	case err == nil:
		// Another symlink: ours from an older layout, or a user's; replaced below.
	case errors.Is(err, fs.ErrNotExist):
	default:
		if _, statErr := os.Lstat(link); statErr == nil {
			return false, fmt.Errorf("%s exists and is not a symlink (Kube-OVN's binary?): left alone, NADs of type %s will not reach edgeovn", link, KubeOVNPluginName)
		}
		return false, fmt.Errorf("read link %s: %w", link, err)
	}
	tmp := link + ".edgeovn-tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(PluginName, tmp); err != nil {
		return false, fmt.Errorf("link %s to %s: %w", KubeOVNPluginName, PluginName, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return false, fmt.Errorf("link %s to %s: %w", KubeOVNPluginName, PluginName, err)
	}
	return true, nil
}
