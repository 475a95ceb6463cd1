package node

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ManifestName is edgeovn's record, in the CNI bin dir, of the plugins it installed there:
// each name with the digest of the content it wrote. A plugin is edgeovn's to upgrade or
// remove only while it is listed and still has that content, so one another package put
// there (before or after) is never touched. The runtime looks plugins up by name; a dot file
// is never one.
const ManifestName = ".edgeovn-installed.json"

// manifest maps plugin name to "sha256:<hex>" of what edgeovn wrote.
type manifest map[string]string

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// readManifest reads the bin dir's manifest; none is an empty one.
func readManifest(binDir string) (manifest, error) {
	path := filepath.Join(binDir, ManifestName)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return manifest{}, nil // the install that follows says what is wrong with the bin dir
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	m := manifest{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return m, nil
}

func (m manifest) write(binDir string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("render cni plugin manifest: %w", err)
	}
	_, err = writeFileAtomic(filepath.Join(binDir, ManifestName), append(b, '\n'), 0o644)
	return err
}

// owns reports whether the plugin file in binDir is the one edgeovn wrote.
func (m manifest) owns(binDir, name string) (bool, error) {
	want, ok := m[name]
	if !ok {
		return false, nil
	}
	data, err := os.ReadFile(filepath.Join(binDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read cni plugin %s: %w", name, err)
	}
	return digest(data) == want, nil
}
