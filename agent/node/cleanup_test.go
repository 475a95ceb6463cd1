package node

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

// fakeOVS holds br-int's ports: name -> created by edgeovn.
type fakeOVS struct {
	ports  map[string]bool
	closed bool
}

func (f *fakeOVS) Ports(context.Context, string) ([]vswitch.Port, error) {
	var out []vswitch.Port
	for name, ours := range f.ports {
		if ours && name != HostInterface {
			out = append(out, vswitch.Port{Name: name})
		}
	}
	return out, nil
}

func (f *fakeOVS) HasPort(_ context.Context, name string) (bool, error) {
	_, ok := f.ports[name]
	return ok, nil
}

func (f *fakeOVS) DeletePort(_ context.Context, _, name string) error {
	if ours, ok := f.ports[name]; ok && !ours {
		return ovn.ErrNotOwned
	}
	delete(f.ports, name)
	return nil
}

func (f *fakeOVS) Close() { f.closed = true }

// A host with no provider bridge: the underlay's part of cleanup is tested in e2e (it moves
// real addresses).
func (f *fakeOVS) ProviderBridges(context.Context) ([]vswitch.ProviderBridge, error) { return nil, nil }
func (f *fakeOVS) SetBridgeMapping(context.Context, string, string) error            { return nil }
func (f *fakeOVS) SetChassisMACMapping(context.Context, string, string) error        { return nil }
func (f *fakeOVS) DeleteProviderBridge(context.Context, string) error                { return nil }

// cleanupHost is a host edgeovn ran on: its CNI files beside others', a state directory and
// ports on br-int.
type cleanupHost struct {
	req CleanupRequest
	ovs *fakeOVS
	out *bytes.Buffer
}

func newCleanupHost(t *testing.T) *cleanupHost {
	t.Helper()
	root := t.TempDir()
	h := &cleanupHost{ovs: &fakeOVS{ports: map[string]bool{"3f2a_h": true, HostInterface: true, "eth1": false}}, out: &bytes.Buffer{}}
	h.req = CleanupRequest{CNIConfDir: filepath.Join(root, "net.d"), CNIBinDir: filepath.Join(root, "bin"),
		CNISocket: filepath.Join(root, "run", "cni.sock"), StateDir: filepath.Join(root, "state"),
		IPAMDatabase: filepath.Join(root, "state", "ipam.db"), Out: h.out,
		OVS: func(context.Context) (CleanupOVS, error) { return h.ovs, nil }}
	src := t.TempDir()
	for _, d := range []string{h.req.CNIConfDir, h.req.CNIBinDir, h.req.StateDir} {
		must(t, os.MkdirAll(d, 0o755))
	}
	write(t, filepath.Join(src, "loopback"), "shipped loopback")
	write(t, filepath.Join(src, "portmap"), "shipped portmap")
	write(t, filepath.Join(h.req.CNIBinDir, "portmap"), "debian's portmap")
	write(t, filepath.Join(h.req.CNIBinDir, "bridge"), "debian's bridge")
	write(t, filepath.Join(h.req.CNIBinDir, PluginName), "edgeovn-cni")
	write(t, filepath.Join(h.req.CNIConfDir, ConfName), "{}")
	write(t, filepath.Join(h.req.CNIConfDir, "10-flannel.conflist"), "{}")
	write(t, h.req.IPAMDatabase, "db")
	must(t, os.MkdirAll(filepath.Dir(h.req.CNISocket), 0o700))
	write(t, filepath.Join(filepath.Dir(h.req.CNISocket), FilesRecordName), "{}")
	write(t, filepath.Join(filepath.Dir(h.req.CNISocket), RightsRecordName), "{}")
	if _, err := installPlugins(pluginInstall{SourceDir: src, BinDir: h.req.CNIBinDir, Log: slog.New(slog.DiscardHandler)}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *cleanupHost) exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestCleanupReportsOnly: with nothing selected, nothing changes and every removal is listed.
func TestCleanupReportsOnly(t *testing.T) {
	h := newCleanupHost(t)
	if err := Cleanup(context.Background(), h.req); err != nil {
		t.Fatal(err)
	}
	out := h.out.String()
	for _, want := range []string{"would remove " + filepath.Join(h.req.CNIConfDir, ConfName), "would remove " + filepath.Join(h.req.CNIBinDir, "loopback"),
		"keep " + filepath.Join(h.req.CNIBinDir, "portmap") + " (not installed by edgeovn)", "would remove ovs port 3f2a_h", "would remove ovs port ovn0",
		"would remove " + h.req.StateDir, "nothing removed"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if !h.exists(filepath.Join(h.req.CNIConfDir, ConfName)) || !h.exists(filepath.Join(h.req.CNIBinDir, "loopback")) ||
		!h.exists(h.req.IPAMDatabase) || len(h.ovs.ports) != 3 {
		t.Fatalf("a report-only cleanup removed something:\n%s", out)
	}
}

// TestCleanupRemovesWhatIsAsked: --cni (as on package removal) takes edgeovn's CNI files
// and nothing else; --ovs and --state (purge) then the ports and the state.
func TestCleanupRemovesWhatIsAsked(t *testing.T) {
	h := newCleanupHost(t)
	ctx := context.Background()
	h.req.Remove = CleanupParts{CNI: true}
	record := filepath.Join(filepath.Dir(h.req.CNISocket), FilesRecordName)
	rights := filepath.Join(filepath.Dir(h.req.CNISocket), RightsRecordName)
	if err := Cleanup(ctx, h.req); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{
		filepath.Join(h.req.CNIConfDir, ConfName): false, filepath.Join(h.req.CNIBinDir, PluginName): false,
		filepath.Join(h.req.CNIBinDir, "loopback"): false, filepath.Join(h.req.CNIBinDir, ManifestName): false,
		filepath.Join(h.req.CNIBinDir, "portmap"): true, filepath.Join(h.req.CNIBinDir, "bridge"): true,
		filepath.Join(h.req.CNIConfDir, "10-flannel.conflist"): true, h.req.IPAMDatabase: true, record: false, rights: false,
	} {
		if h.exists(path) != want {
			t.Errorf("after --cni: %s exists %v, want %v", path, !want, want)
		}
	}
	if len(h.ovs.ports) != 3 {
		t.Errorf("--cni removed ovs ports: %v", h.ovs.ports)
	}
	h.ovs.ports[HostInterface] = false // an ovn0 someone else made stays
	h.req.Remove = CleanupParts{CNI: true, OVS: true, State: true}
	if err := Cleanup(ctx, h.req); err != nil {
		t.Fatal(err)
	}
	if h.exists(h.req.StateDir) {
		t.Errorf("state directory left")
	}
	if _, ok := h.ovs.ports["3f2a_h"]; ok || len(h.ovs.ports) != 2 ||
		!strings.Contains(h.out.String(), "keep ovs port ovn0 on br-int (not created by edgeovn)") || !h.ovs.closed {
		t.Errorf("ports after --ovs: %v\n%s", h.ovs.ports, h.out)
	}
}

// TestCleanupRefusesWhileRunning: a running daemon would put everything back.
func TestCleanupRefusesWhileRunning(t *testing.T) {
	h := newCleanupHost(t)
	must(t, os.MkdirAll(filepath.Dir(h.req.CNISocket), 0o700))
	ln, err := net.Listen("unix", h.req.CNISocket)
	must(t, err)
	defer ln.Close()
	h.req.Remove = CleanupParts{CNI: true}
	if err := Cleanup(context.Background(), h.req); !errors.Is(err, ErrRunning) {
		t.Fatalf("cleanup beside a live socket: %v", err)
	}
	if !h.exists(filepath.Join(h.req.CNIConfDir, ConfName)) {
		t.Fatal("removed the config of a running edgeovn")
	}
	h.req.Remove = CleanupParts{}
	if err := Cleanup(context.Background(), h.req); err != nil {
		t.Fatalf("report-only beside a live socket: %v", err)
	}
}
