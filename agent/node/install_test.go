package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

func TestWriteFileAtomicOnlyOnChange(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", ConfName)
	wrote, err := writeFileAtomic(p, []byte("a"), 0o644)
	if err != nil || !wrote {
		t.Fatalf("first write: wrote=%v err=%v", wrote, err)
	}
	st1, _ := os.Stat(p)
	wrote, err = writeFileAtomic(p, []byte("a"), 0o644)
	if err != nil || wrote {
		t.Fatalf("same content rewritten: wrote=%v err=%v", wrote, err)
	}
	if st2, _ := os.Stat(p); !os.SameFile(st1, st2) {
		t.Fatal("unchanged file was replaced")
	}
	if wrote, err = writeFileAtomic(p, []byte("b"), 0o755); err != nil || !wrote {
		t.Fatalf("changed content: wrote=%v err=%v", wrote, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "b" {
		t.Fatalf("content %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
		t.Fatalf("temporary files left behind: %v", ents)
	}
}

// TestWriteFileAtomicKeepsOldOnError provokes each way the write can fail: as root, a
// read-only mount (the temporary file cannot be made) and a full filesystem (the write itself
// fails); as another user, a directory without write permission. The old file must be intact
// and no temporary file left.
func TestWriteFileAtomicKeepsOldOnError(t *testing.T) {
	provoke := map[string]func(t *testing.T, dir string){
		"directory without write permission": func(t *testing.T, dir string) {
			if os.Geteuid() == 0 {
				t.Skip("root ignores directory permissions: the mounts below provoke the failure instead")
			}
			must(t, os.Chmod(dir, 0o500))
			t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		},
		"read-only mount": func(t *testing.T, dir string) {
			needRoot(t)
			must(t, unix.Mount(dir, dir, "", unix.MS_BIND, ""))
			t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
			must(t, unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""))
		},
		"full filesystem": func(t *testing.T, dir string) {
			needRoot(t)
			old, err := os.ReadFile(filepath.Join(dir, "f"))
			must(t, err)
			must(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
			t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
			must(t, os.WriteFile(filepath.Join(dir, "f"), old, 0o644))
			fill, err := os.Create(filepath.Join(dir, "fill"))
			must(t, err)
			_, err = fill.Write(make([]byte, 1<<20))
			fill.Close()
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("filling the tmpfs: %v", err)
			}
		},
	}
	for name, breakDir := range provoke {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			if _, err := writeFileAtomic(p, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			breakDir(t, dir)
			before := listDir(t, dir)
			if _, err := writeFileAtomic(p, bytes.Repeat([]byte("new"), 1<<16), 0o644); err == nil {
				t.Fatal("write succeeded")
			}
			if b, _ := os.ReadFile(p); string(b) != "old" {
				t.Fatalf("old content lost: %q", b)
			}
			if after := listDir(t, dir); after != before {
				t.Fatalf("files before the write %s, after %s: a temporary file was left", before, after)
			}
		})
	}
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "needs root to mount")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	must(t, err)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return fmt.Sprint(names)
}

func TestConflist(t *testing.T) {
	type plugin struct {
		Type         string          `json:"type"`
		Socket       string          `json:"serverSocket"`
		Capabilities map[string]bool `json:"capabilities"`
	}
	b, err := conflist("/run/edgeovn/cni.sock")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		CNIVersion  string   `json:"cniVersion"`
		CNIVersions []string `json:"cniVersions"`
		Name        string   `json:"name"`
		Plugins     []plugin `json:"plugins"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.CNIVersion != "1.0.0" || len(c.CNIVersions) != 2 || c.Plugins[0].Type != PluginName || c.Plugins[0].Socket != "/run/edgeovn/cni.sock" {
		t.Fatalf("conflist %s", b)
	}
	// hostPort is the daemon's: edgeovn's plugin takes the portMappings, nothing is chained.
	if len(c.Plugins) != 1 || !c.Plugins[0].Capabilities["portMappings"] {
		t.Fatalf("want edgeovn alone, with the portMappings capability: %s", b)
	}
}
