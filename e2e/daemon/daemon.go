package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"sync"

	"github.com/edgeovn/edgeovn/e2e/harness"
	"github.com/edgeovn/edgeovn/e2e/podsim"
)

// Spec says which binaries run as which node.
type Spec struct {
	Name   string   // process and log name, default "edgeovn"
	Node   string   // Node name
	BinDir string   // holds edgeovn and edgeovn-cni
	Extra  []string // more flags
	Env    []string // more environment (a test hook)
}

// Kubelet returns the simulated kubelet of node, reading the CNI config edgeovn writes and
// running the plugins in the rig's network namespace, as a runtime runs them in the host's
// (the host port and host wiring must land there, not in this machine's).
func Kubelet(rig *harness.Rig, node string) *podsim.Kubelet {
	k := &podsim.Kubelet{Kube: rig.Kube(), Node: node, NodeIP: rig.NodeIP, HostNetns: rig.NetnsPath, ConfDir: filepath.Join(rig.Dir, "net.d"),
		BinDir: filepath.Join(rig.Dir, "cnibin"), CacheDir: filepath.Join(rig.Dir, "cnicache")}
	if _, seen := sweeping.LoadOrStore(rig, true); !seen {
		_ = rig.OnClose(k.RemoveLeft) // a stopped rig has nothing left to sweep
	}
	return k
}

// sweeping holds the rigs whose teardown removes the sandbox namespaces their kubelets left
// (a bench that ends without deleting its pods' namespaces; an ADD that failed).
var sweeping sync.Map

// IPAMDatabase is where edgeovn keeps its IPAM in the rig.
func IPAMDatabase(rig *harness.Rig) string { return filepath.Join(rig.Dir, "ipam.db") }

// Start starts edgeovn in the rig's network namespace.
func Start(ctx context.Context, rig *harness.Rig, s Spec) (*harness.Process, error) {
	return startWith(ctx, rig, s, nil)
}

// startWith starts edgeovn with the rig's flags, edit changing the process spec last.
func startWith(ctx context.Context, rig *harness.Rig, s Spec, edit func(*harness.ProcessSpec)) (*harness.Process, error) {
	if s.Name == "" {
		s.Name = "edgeovn"
	}
	k := Kubelet(rig, s.Node)
	args := append([]string{"run",
		"--node-name=" + s.Node, "--kubeconfig=" + rig.Kubeconfig}, DBFlags(rig.NBEndpoint, rig.SBEndpoint)...)
	args = append(args, "--ovs-db="+rig.OVSEndpoint,
		"--ipam-db="+IPAMDatabase(rig), "--cni-socket="+Socket(rig),
		"--cni-conf-dir="+k.ConfDir, "--cni-bin-dir="+k.BinDir,
		"--cni-binary="+filepath.Join(s.BinDir, "edgeovn-cni"))
	spec := harness.ProcessSpec{Name: s.Name, Path: filepath.Join(s.BinDir, "edgeovn"), Args: append(args, s.Extra...), Env: s.Env}
	if edit != nil {
		edit(&spec)
	}
	return rig.Start(ctx, spec)
}

// HostInterfaceBound reports whether ovn-controller has bound edgeovn's ovn0 in the rig
// (ovn-installed on its interface): its datapaths are then local and their flows computed.
func HostInterfaceBound(ctx context.Context, rig *harness.Rig) bool {
	out, err := rig.Run(ctx, "ovs-vsctl", "--db="+rig.OVSEndpoint, "--if-exists", "get", "Interface", "ovn0", "external_ids:ovn-installed")
	return err == nil && strings.Contains(string(out), "true")
}

// DBFlags are edgeovn's --ovn-nb and --ovn-sb flags for a rig's endpoints: one each, or one
// per raft member (the rig gives a cluster's members comma-separated, as OVN's tools take them).
func DBFlags(nb, sb string) []string {
	var flags []string
	for _, ep := range harness.SplitEndpoints(nb) {
		flags = append(flags, "--ovn-nb="+ep)
	}
	for _, ep := range harness.SplitEndpoints(sb) {
		flags = append(flags, "--ovn-sb="+ep)
	}
	return flags
}
