package node

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/config"
	"github.com/edgeovn/edgeovn/agent/node/health"
)

// recordFixture is a role whose CNI files live in a temporary tree: shipped sources, the
// runtime's directories and the socket's (runtime) directory.
type recordFixture struct {
	r   *Role
	src string // the shipped edgeovn-cni
	log *bytes.Buffer
}

func newRecordFixture(t *testing.T) recordFixture {
	t.Helper()
	root := t.TempDir()
	ship := filepath.Join(root, "ship")
	must(t, os.MkdirAll(ship, 0o755))
	src := filepath.Join(ship, "edgeovn-cni")
	write(t, src, "cni v1")
	for _, p := range Plugins {
		write(t, filepath.Join(ship, p), p+" v1")
	}
	must(t, os.MkdirAll(filepath.Join(root, "run"), 0o700))
	f := recordFixture{src: src, log: &bytes.Buffer{}}
	f.r = &Role{req: Request{Node: config.Node{CNISocket: filepath.Join(root, "run", "cni.sock"), CNIConfDir: filepath.Join(root, "net.d"),
		CNIBinDir: filepath.Join(root, "bin"), CNIBinarySource: src}}, log: slog.New(slog.NewTextHandler(f.log, nil)), started: make(chan struct{})}
	f.r.ready = newReadiness(readinessProbes{})
	f.r.health = health.NewMonitor(health.MonitorRequest{})
	return f
}

// install runs the role's start-time install and returns how it checked the files.
func (f recordFixture) install(t *testing.T) string {
	t.Helper()
	f.log.Reset()
	must(t, f.r.install(context.Background()))
	switch {
	case strings.Contains(f.log.String(), `files_checked="in full"`):
		return "full"
	case strings.Contains(f.log.String(), `files_checked="by their recorded stamps"`):
		return "stamps"
	}
	t.Fatalf("install logged no files_checked: %s", f.log)
	return ""
}

func (f recordFixture) conf() string   { return filepath.Join(f.r.req.CNIConfDir, ConfName) }
func (f recordFixture) binary() string { return filepath.Join(f.r.req.CNIBinDir, PluginName) }
func (f recordFixture) record() string { return f.r.filesRecordPath() }
func (f recordFixture) expect(t *testing.T, got, want, why string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: files checked %s, want %s; log:\n%s", why, got, want, f.log)
	}
}

// TestInstallTrustsRecordedStamps: a start after one that checked the files in full only
// stats them; anything that changed since (a file removed, the shipped binary upgraded,
// another socket, a damaged record) brings the full check back, which repairs and records
// again. A damaged record is not an error and loses nothing.
func TestInstallTrustsRecordedStamps(t *testing.T) {
	f := newRecordFixture(t)
	f.expect(t, f.install(t), "full", "first start, no record")
	select {
	case <-f.r.started:
	default:
		t.Fatal("install did not mark the start done: what needs the API would wait out APIStartGrace")
	}
	if _, err := os.Stat(f.record()); err != nil {
		t.Fatalf("no record after a full check: %v", err)
	}
	f.expect(t, f.install(t), "stamps", "restart, nothing changed")

	must(t, os.Remove(f.conf()))
	f.expect(t, f.install(t), "full", "conflist removed")
	if _, err := os.Stat(f.conf()); err != nil {
		t.Fatalf("conflist not rewritten: %v", err)
	}
	f.expect(t, f.install(t), "stamps", "after the repair")

	time.Sleep(10 * time.Millisecond) // a new mtime even on coarse clocks
	write(t, f.src, "cni v2")         // a package upgrade
	f.expect(t, f.install(t), "full", "shipped binary upgraded")
	if got := read(t, f.binary()); got != "cni v2" {
		t.Fatalf("installed binary %q after the upgrade, want cni v2", got)
	}

	f.r.req.CNISocket = filepath.Join(filepath.Dir(f.r.req.CNISocket), "other.sock")
	f.expect(t, f.install(t), "full", "another socket path")
	if !strings.Contains(read(t, f.conf()), "other.sock") {
		t.Fatalf("conflist does not name the new socket: %s", read(t, f.conf()))
	}

	write(t, f.record(), "{not json")
	f.expect(t, f.install(t), "full", "damaged record")
	if got := read(t, f.binary()); got != "cni v2" {
		t.Fatalf("a damaged record lost the installed binary: %q", got)
	}
	f.expect(t, f.install(t), "stamps", "record rewritten after the damaged one")
}
