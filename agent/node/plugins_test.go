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
	present, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: slog.New(slog.DiscardHandler)})
	if err != nil || !present.has["loopback"] || !present.wrote {
		t.Fatalf("present after install: %v, %v", present, err)
	}
	if got := read(t, filepath.Join(bin, "loopback")); got != "shipped loopback" {
		t.Fatalf("loopback installed as %q", got)
	}
	if st, _ := os.Stat(filepath.Join(bin, "loopback")); st.Mode().Perm() != 0o755 {
		t.Fatalf("loopback mode %v", st.Mode())
	}

	other := t.TempDir()
	write(t, filepath.Join(other, "loopback"), "debian's loopback")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: other, Log: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(other, "loopback")); got != "debian's loopback" {
		t.Fatalf("an existing loopback was replaced: %q", got)
	}

	// Nothing shipped, nothing in the bin dir: reported absent.
	present, err = installPlugins(pluginInstall{SourceDir: t.TempDir(), BinDir: t.TempDir(), Log: slog.New(slog.DiscardHandler)})
	if err != nil || present.has["loopback"] {
		t.Fatalf("nothing shipped: present %v, err %v", present, err)
	}
}

// TestRetiredPortmapRemoved: the portmap an older edgeovn installed (recorded, unchanged) is
// removed with its record on upgrade; one another package installed is kept.
func TestRetiredPortmapRemoved(t *testing.T) {
	src, bin := t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, "loopback"), "loopback")
	write(t, filepath.Join(bin, "portmap"), "portmap edgeovn shipped")
	if err := (manifest{"portmap": digest([]byte("portmap edgeovn shipped"))}).write(bin); err != nil {
		t.Fatal(err)
	}
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "portmap")); !os.IsNotExist(err) {
		t.Fatalf("edgeovn's old portmap still there: %v", err)
	}
	m, err := readManifest(bin)
	if err != nil || m["portmap"] != "" || m["loopback"] == "" {
		t.Fatalf("manifest after upgrade: %v, %v", m, err)
	}

	other := t.TempDir()
	write(t, filepath.Join(other, "portmap"), "debian's portmap")
	if err := (manifest{"portmap": digest([]byte("portmap edgeovn shipped"))}).write(other); err != nil {
		t.Fatal(err)
	}
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: other, Log: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(other, "portmap")); got != "debian's portmap" {
		t.Fatalf("another package's portmap was touched: %q", got)
	}
	if m, _ := readManifest(other); m["portmap"] != "" {
		t.Fatalf("the stale record of portmap kept: %v", m)
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
// one; one another package put there since is kept.
func TestPluginsUpgradedOnlyWhenOurs(t *testing.T) {
	src, bin := t.TempDir(), t.TempDir()
	log := slog.New(slog.DiscardHandler)
	write(t, filepath.Join(src, "loopback"), "loopback v1")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: log}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "loopback"), "loopback v2")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: log}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(bin, "loopback")); got != "loopback v2" {
		t.Errorf("edgeovn's loopback not upgraded: %q", got)
	}
	write(t, filepath.Join(src, "loopback"), "loopback v3")
	write(t, filepath.Join(bin, "loopback"), "loopback from another package")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: bin, Log: log}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(bin, "loopback")); got != "loopback from another package" {
		t.Errorf("a loopback edgeovn no longer owns was replaced: %q", got)
	}
	m, err := readManifest(bin)
	if err != nil {
		t.Fatal(err)
	}
	if ours, _ := m.owns(bin, "loopback"); ours {
		t.Errorf("replaced loopback still counted as edgeovn's: %v", m)
	}
}
