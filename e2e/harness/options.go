package harness

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Sentinel errors callers branch on.
var (
	// ErrNotReady means a component did not become ready in time or exited while starting.
	ErrNotReady = errors.New("component not ready")
	// ErrDirInUse means the run directory already holds a rig: tear it down with StopDir first.
	ErrDirInUse = errors.New("run directory already holds a rig")
	// ErrNoRig means StopDir found no rig in the directory.
	ErrNoRig = errors.New("no rig in directory")
)

// Options configures a rig. The zero value is usable.
type Options struct {
	// Dir is the run directory. Empty means a fresh /tmp/eovn-XXXX. It must be short: unix
	// socket paths are limited to 107 bytes.
	Dir string
	// KubeAPIServer is the kube-apiserver binary. Empty means $EDGEOVN_KUBE_APISERVER, then
	// <repo>/.cache/bin/kube-apiserver.
	KubeAPIServer string
	// KubeControllerManager, KubeProxy and CoreDNS are the binaries StartControllerManager,
	// StartKubeProxy and StartCoreDNS run. Empty means $EDGEOVN_KUBE_CONTROLLER_MANAGER,
	// $EDGEOVN_KUBE_PROXY and $EDGEOVN_COREDNS, then the same name in <repo>/.cache/bin.
	KubeControllerManager string
	KubeProxy             string
	CoreDNS               string
	// KubeScheduler is the binary StartScheduler runs: empty means $EDGEOVN_KUBE_SCHEDULER,
	// then <repo>/.cache/bin/kube-scheduler.
	KubeScheduler string
	// Kubelet, Containerd, ContainerdShim and Ctr are the real node's binaries (StartRealNode):
	// empty means $EDGEOVN_KUBELET, $EDGEOVN_CONTAINERD, $EDGEOVN_CONTAINERD_SHIM and
	// $EDGEOVN_CTR, then the same name in <repo>/.cache/bin.
	Kubelet        string
	Containerd     string
	ContainerdShim string
	Ctr            string
	// Detach starts every process in its own session so it outlives the starting program;
	// StopDir(Dir) tears the rig down later.
	Detach bool
	// LANPeer makes eth0 a veth whose peer, in a namespace of its own (Rig.LANNetns), is the
	// gateway 192.0.2.1 and LANPeerIP on the host's LAN, reachable by ping, instead of a tap nobody reads.
	LANPeer bool
	// ServiceCIDRs is kube-apiserver's --service-cluster-ip-range, one per family (dual stack:
	// 10.43.0.0/16 and 2001:cafe:43::/112, in the API server's primary family first); empty
	// means k3s's 10.43.0.0/16. With IPv6 first (an IPv6-only cluster), eth0 also holds
	// 2001:db8:2::10/64 and the API server advertises it (it refuses a primary service range
	// of another family than its address): PodAPIServerURL is then that address.
	ServiceCIDRs []netip.Prefix
	// NodeIPv6 gives eth0 2001:db8:2::10/64 beside its IPv4 address in a dual-stack cluster
	// (a host with an address of each family, as a kubelet with --node-ip of both families
	// needs): Rig.NodeIP6 is then that address. An IPv6-first ServiceCIDRs implies it.
	NodeIPv6 bool
	// Keep leaves the run directory (logs, databases) in place after Stop.
	Keep bool
	// Log receives progress messages. Nil discards them.
	Log *slog.Logger
}

// maxSocketPath is the longest unix socket path the kernel accepts (sun_path minus the NUL).
const maxSocketPath = 107

// longestSocketName is the longest socket file name the rig creates in its directory.
const longestSocketName = "/ovn-controller.4194304.ctl"

// binaries the rig runs from $PATH.
var binaries = []string{
	"ip", "ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl",
	"ovn-northd", "ovn-controller", "ovn-nbctl", "etcd",
}

// Schema files the databases are created from.
const (
	nbSchema      = "/usr/share/ovn/ovn-nb.ovsschema"
	sbSchema      = "/usr/share/ovn/ovn-sb.ovsschema"
	vswitchSchema = "/usr/share/openvswitch/vswitch.ovsschema"
)

// Component is an optional part of the rig, started on demand; Preflight checks for it.
type Component string

// The optional components, named as their binaries.
const (
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
	KubeProxy         Component = "kube-proxy"
	CoreDNS           Component = "coredns"
	Kubelet           Component = "kubelet"
	Containerd        Component = "containerd"
	ContainerdShim    Component = "containerd-shim-runc-v2"
	Ctr               Component = "ctr"
)

// RealNode lists what StartRealNode needs: Preflight(RealNodeParts...).
var RealNodeParts = []Component{Kubelet, Containerd, ContainerdShim, Ctr}

// componentEnv names the environment variable that overrides a binary's cache path.
var componentEnv = map[Component]string{
	"kube-apiserver":  "EDGEOVN_KUBE_APISERVER",
	ControllerManager: "EDGEOVN_KUBE_CONTROLLER_MANAGER",
	Scheduler:         "EDGEOVN_KUBE_SCHEDULER",
	KubeProxy:         "EDGEOVN_KUBE_PROXY",
	CoreDNS:           "EDGEOVN_COREDNS",
	Kubelet:           "EDGEOVN_KUBELET",
	Containerd:        "EDGEOVN_CONTAINERD",
	ContainerdShim:    "EDGEOVN_CONTAINERD_SHIM",
	Ctr:               "EDGEOVN_CTR",
}

// componentTools are the programs from $PATH a component needs besides its own binary:
// kube-proxy execs iptables-restore (iptables mode) or nft (nftables mode); containerd's shim
// runs Debian's runc; the real node's processes are started with nsenter and unshare, and
// the kubelet's wrapper uses mount.
var componentTools = map[Component][]string{
	KubeProxy:  {"iptables", "iptables-save", "iptables-restore", "ip6tables", "nft"},
	Containerd: {"runc", "nsenter", "unshare", "mount"},
}

// Preflight reports, in one error, everything missing for a rig on this machine (not root,
// a missing binary or schema, no kube-apiserver build) and for the optional components the
// caller needs, so tests can t.Skip with its message. Binaries come from the environment
// ($EDGEOVN_KUBE_APISERVER, ...) or the repository's .cache/bin.
func Preflight(needs ...Component) error {
	return preflight(Options{}, needs...)
}

func preflight(o Options, needs ...Component) error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "not root (network namespaces and OVS need root)")
	}
	tools := slices.Clone(binaries)
	for _, c := range needs {
		tools = append(tools, componentTools[c]...)
	}
	for _, b := range tools {
		if _, err := exec.LookPath(b); err != nil {
			missing = append(missing, fmt.Sprintf("no %s in PATH", b))
		}
	}
	for _, f := range []string{nbSchema, sbSchema, vswitchSchema, "/dev/net/tun"} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, fmt.Sprintf("no %s", f))
		}
	}
	if len(missing) > 0 {
		missing = append(missing, "install with: e2e/scripts/install-deps.sh (or make deps)")
	}
	if err := checkBinary("kube-apiserver", o.apiServerPath()); err != nil {
		missing = append(missing, err.Error())
	}
	for _, c := range needs {
		if err := checkBinary(c, o.componentPath(c)); err != nil {
			missing = append(missing, err.Error())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("rig preflight: %s", strings.Join(missing, "; "))
}

func checkBinary(c Component, path string) error {
	st, err := os.Stat(path)
	if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
		return nil
	}
	script := "build-kube.sh"
	switch c {
	case CoreDNS:
		script = "build-coredns.sh"
	case Containerd, ContainerdShim, Ctr:
		script = "build-containerd.sh"
	}
	return fmt.Errorf("no %s binary at %s: build it with e2e/scripts/%s %s (or make deps)",
		c, path, script, filepath.Dir(path))
}

// apiServerPath resolves the kube-apiserver binary: option, environment, repository cache.
func (o Options) apiServerPath() string {
	return binaryPath(o.KubeAPIServer, "kube-apiserver")
}

// componentPath resolves an optional component's binary the same way.
func (o Options) componentPath(c Component) string {
	opt := map[Component]string{ControllerManager: o.KubeControllerManager, Scheduler: o.KubeScheduler, KubeProxy: o.KubeProxy, CoreDNS: o.CoreDNS,
		Kubelet: o.Kubelet, Containerd: o.Containerd, ContainerdShim: o.ContainerdShim, Ctr: o.Ctr}[c]
	return binaryPath(opt, c)
}

func binaryPath(option string, c Component) string {
	if option != "" {
		return option
	}
	if p := os.Getenv(componentEnv[c]); p != "" {
		return p
	}
	return filepath.Join(repoRoot(), ".cache", "bin", string(c))
}

// repoRoot walks up from the working directory to the edgeovn module's go.mod, so that tests
// (run in their package directory) and `go run` from the root find the same cache.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/edgeovn/edgeovn\n") {
			return dir
		}
		if dir == filepath.Dir(dir) {
			return wd
		}
	}
}

func (o Options) logger() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.New(slog.DiscardHandler)
}
