package node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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

func TestWriteFileAtomicKeepsOldOnError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if _, err := writeFileAtomic(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; the error path cannot be provoked this way")
	}
	if _, err := writeFileAtomic(p, []byte("new"), 0o644); err == nil {
		t.Fatal("write into read-only directory succeeded")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("old content lost: %q", b)
	}
}

func TestConflist(t *testing.T) {
	type plugin struct {
		Type         string          `json:"type"`
		Socket       string          `json:"serverSocket"`
		Capabilities map[string]bool `json:"capabilities"`
	}
	for _, portmap := range []bool{false, true} {
		b, err := conflist("/run/edgeovn/cni.sock", portmap)
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
		want := 1
		if portmap {
			want = 2
			if p := c.Plugins[len(c.Plugins)-1]; p.Type != "portmap" || !p.Capabilities["portMappings"] {
				t.Fatalf("portmap not chained with portMappings: %s", b)
			}
		}
		if len(c.Plugins) != want {
			t.Fatalf("portmap=%v: %d plugins in %s", portmap, len(c.Plugins), b)
		}
	}
}
