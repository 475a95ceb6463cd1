package node

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallPlugins: shipped plugins are installed where missing; a plugin already in the
// bin dir is kept as it is; one edgeovn does not ship is reported absent, not an error.
func TestInstallPlugins(t *testing.T) {
	src, bin := t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, "loopback"), "shipped loopback")
	write(t, filepath.Join(src, "portmap"), "shipped portmap")
	write(t, filepath.Join(bin, "loopback"), "debian's loopback")

	present, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if !present.has["loopback"] || !present.has["portmap"] {
		t.Fatalf("present after install: %v", present)
	}
	if got := read(t, filepath.Join(bin, "loopback")); got != "debian's loopback" {
		t.Fatalf("an existing loopback was replaced: %q", got)
	}
	if got := read(t, filepath.Join(bin, "portmap")); got != "shipped portmap" {
		t.Fatalf("portmap installed as %q", got)
	}
	if st, _ := os.Stat(filepath.Join(bin, "portmap")); st.Mode().Perm() != 0o755 {
		t.Fatalf("portmap mode %v", st.Mode())
	}

	// Nothing shipped, nothing in the bin dir: reported absent.
	present, err = installPlugins(pluginInstall{SourceDir: t.TempDir(), BinDir: t.TempDir(), Log: slog.New(slog.DiscardHandler)})
	if err != nil || present.has["portmap"] || present.has["loopback"] {
		t.Fatalf("nothing shipped: present %v, err %v", present, err)
	}
}

// TestInstallPluginsBadBinDir: a bin dir that is a file is an error naming the plugin, and the
// file is left as it was.
func TestInstallPluginsBadBinDir(t *testing.T) {
	src := t.TempDir()
	write(t, filepath.Join(src, "loopback"), "shipped loopback")
	notDir := filepath.Join(t.TempDir(), "bin")
	write(t, notDir, "a file, not a directory")
	_, err := installPlugins(pluginInstall{SourceDir: src, BinDir: notDir, Log: slog.New(slog.DiscardHandler)})
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v, want one naming loopback", err)
	}
	if got := read(t, notDir); got != "a file, not a directory" {
		t.Fatalf("the file in the way was changed: %q", got)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPluginsUpgradedOnlyWhenOurs: a plugin edgeovn installed is upgraded with the shipped
// one; one another package put there, or that was changed since, is kept.
func TestPluginsUpgradedOnlyWhenOurs(t *testing.T) {
	src, bin := t.TempDir(), t.TempDir()
	log := slog.New(slog.DiscardHandler)
	write(t, filepath.Join(src, "loopback"), "loopback v1")
	write(t, filepath.Join(src, "portmap"), "portmap v1")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: log}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "loopback"), "loopback v2")
	write(t, filepath.Join(src, "portmap"), "portmap v2")
	write(t, filepath.Join(bin, "portmap"), "portmap from another package")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: log}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(bin, "loopback")); got != "loopback v2" {
		t.Errorf("edgeovn's loopback not upgraded: %q", got)
	}
	if got := read(t, filepath.Join(bin, "portmap")); got != "portmap from another package" {
		t.Errorf("a portmap edgeovn no longer owns was replaced: %q", got)
	}
	m, err := readManifest(bin)
	if err != nil {
		t.Fatal(err)
	}
	if ours, _ := m.owns(bin, "loopback"); !ours {
		t.Errorf("upgraded loopback not recorded: %v", m)
	}
	if ours, _ := m.owns(bin, "portmap"); ours {
		t.Errorf("replaced portmap still counted as edgeovn's: %v", m)
	}
}
