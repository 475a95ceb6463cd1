package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkKubeOVN: the bin dir gets kube-ovn -> edgeovn once (again: no change), a stale
// symlink is replaced, and a regular kube-ovn (Kube-OVN's own binary) is left alone with an
// error saying so.
func TestLinkKubeOVN(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, KubeOVNPluginName)
	for i, want := range []bool{true, false} {
		changed, err := linkKubeOVN(dir)
		if err != nil || changed != want {
			t.Fatalf("call %d: changed %v, err %v; want %v, nil", i, changed, err, want)
		}
	}
	if got, _ := os.Readlink(link); got != PluginName {
		t.Fatalf("link points at %q, want %q", got, PluginName)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("old-edgeovn", link); err != nil {
		t.Fatal(err)
	}
	if changed, err := linkKubeOVN(dir); err != nil || !changed {
		t.Fatalf("stale link: changed %v, err %v", changed, err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(link, []byte("kube-ovn's binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := linkKubeOVN(dir); err == nil || !strings.Contains(err.Error(), "not a symlink") {
		t.Fatalf("regular file: err %v, want one saying it is left alone", err)
	}
	if b, _ := os.ReadFile(link); string(b) != "kube-ovn's binary" {
		t.Fatalf("regular file changed to %q", b)
	}
}
