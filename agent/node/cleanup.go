package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// CleanupParts selects what Cleanup removes; none selected, it only reports.
type CleanupParts struct {
	// CNI: the CNI config, /opt/cni/bin/edgeovn, and the plugins edgeovn installed (by its
	// manifest; others' plugins stay), so the runtime sends no pod to a plugin that is gone.
	CNI bool
	// OVS: edgeovn's routes (proto 211), its pod ports on br-int, the host's ovn0 (br-int
	// itself is ovn-controller's), and edgeovn's nftables tables (masquerade, node ports).
	OVS bool
	// State: the state directory and the IPAM database.
	State bool
}

func (p CleanupParts) any() bool { return p.CNI || p.OVS || p.State }

// CleanupRequest says where edgeovn's files and ports are and what to remove.
type CleanupRequest struct {
	CNIConfDir   string
	CNIBinDir    string
	CNISocket    string // answering means edgeovn runs: Cleanup then refuses to remove anything
	StateDir     string // removed whole
	IPAMDatabase string // with its -wal, -shm and .lock, where it is outside StateDir
	// OVS connects to the Open_vSwitch database (vswitch.Connect in production).
	OVS    func(context.Context) (CleanupOVS, error)
	Remove CleanupParts
	Out    io.Writer // one line per thing removed, kept, or that would be removed
}

// ErrRunning: Cleanup was asked to remove things while edgeovn runs, which would put them back.
var ErrRunning = errors.New("edgeovn is running")

// Cleanup removes what req.Remove selects of what edgeovn put on the host, and says so line
// by line, looking at nothing else; with nothing selected it changes nothing and lists what
// each part would remove.
// Everything missing already is success, so it can run twice (remove, then purge).
func Cleanup(ctx context.Context, req CleanupRequest) error {
	if req.Remove.any() && socketAnswers(req.CNISocket) {
		return fmt.Errorf("%w (its cni socket %s answers): stop it first (systemctl stop edgeovn)", ErrRunning, req.CNISocket)
	}
	c := cleaner{out: req.Out}
	report := !req.Remove.any()
	if report || req.Remove.CNI {
		c.cni(req, req.Remove.CNI)
	}
	if report || req.Remove.OVS {
		c.routes(req.Remove.OVS)
		c.ovs(ctx, req, req.Remove.OVS)
		c.nft(req.Remove.OVS)
	}
	if report || req.Remove.State {
		c.state(req, req.Remove.State)
	}
	if report {
		fmt.Fprintln(req.Out, "nothing removed: pass --cni, --ovs, --state or --all to remove the above")
	}
	return errors.Join(c.errs...)
}

// cleaner reports and, where asked, removes, collecting errors so one failure does not
// keep the rest in place.
type cleaner struct {
	out  io.Writer
	errs []error
}

func (c *cleaner) removeFile(path string, do bool) {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return
	}
	if !do {
		fmt.Fprintln(c.out, "would remove", path)
		return
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.errs = append(c.errs, fmt.Errorf("remove %s: %w", path, err))
		return
	}
	fmt.Fprintln(c.out, "removed", path)
}

func (c *cleaner) cni(req CleanupRequest, do bool) {
	// The config first: from then on the runtime calls no edgeovn plugin.
	c.removeFile(filepath.Join(req.CNIConfDir, ConfName), do)
	c.removeFile(filepath.Join(req.CNIBinDir, PluginName), do)
	if t, err := os.Readlink(filepath.Join(req.CNIBinDir, KubeOVNPluginName)); err == nil && t == PluginName {
		c.removeFile(filepath.Join(req.CNIBinDir, KubeOVNPluginName), do) // only our link
	}
	m, err := readManifest(req.CNIBinDir)
	if err != nil {
		c.errs = append(c.errs, err)
		return
	}
	for _, name := range append(slices.Clone(Plugins), RetiredPlugins...) {
		path := filepath.Join(req.CNIBinDir, name)
		ours, err := m.owns(req.CNIBinDir, name)
		switch {
		case err != nil:
			c.errs = append(c.errs, err)
		case ours:
			c.removeFile(path, do)
		default:
			if _, err := os.Stat(path); err == nil {
				fmt.Fprintln(c.out, "keep", path, "(not installed by edgeovn)")
			}
		}
	}
	c.removeFile(filepath.Join(req.CNIBinDir, ManifestName), do)
	if req.CNISocket != "" {
		c.removeFile(filepath.Join(filepath.Dir(req.CNISocket), FilesRecordName), do)
		c.removeFile(filepath.Join(filepath.Dir(req.CNISocket), RightsRecordName), do)
	}
}

func (c *cleaner) state(req CleanupRequest, do bool) {
	if !within(req.StateDir, req.IPAMDatabase) {
		for _, suffix := range []string{"", "-wal", "-shm", ".lock"} {
			c.removeFile(req.IPAMDatabase+suffix, do)
		}
	}
	if _, err := os.Stat(req.StateDir); err != nil {
		return
	}
	if !do {
		fmt.Fprintln(c.out, "would remove", req.StateDir, "and everything in it")
		return
	}
	if err := os.RemoveAll(req.StateDir); err != nil {
		c.errs = append(c.errs, fmt.Errorf("remove state directory %s: %w", req.StateDir, err))
		return
	}
	fmt.Fprintln(c.out, "removed", req.StateDir)
}

// within reports whether path is inside dir.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// socketAnswers reports whether something accepts connections on the CNI socket.
func socketAnswers(path string) bool {
	if path == "" {
		return false
	}
	conn, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}
