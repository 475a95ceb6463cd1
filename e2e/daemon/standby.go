package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/edgeovn/edgeovn/e2e/harness"
)

// Standby describes a second host's edgeovn sharing one rig with the first: a host whose
// controller role competes for the Lease. A rig simulates one host's Open vSwitch, and two
// node roles on it would fight over br-int and ovn0, so a standby's node role is pointed at an
// Open_vSwitch socket that does not exist (it waits there, touching nothing), and everything
// else a host keeps to itself (CNI socket and directories, IPAM database, metrics address) is
// under <rig dir>/<Name>/. Its controller role is a full one against the rig's northbound and
// API server.
type Standby struct {
	Name   string // process name and directory; also the Node name unless Node is set
	Node   string
	BinDir string
	// NBEndpoint replaces the rig's northbound endpoint ("" keeps it).
	NBEndpoint string
	// MetricsPort is the standby's metrics port inside the rig's namespace (the first
	// process has 10665).
	MetricsPort int
	// Kubeconfig replaces the rig's admin kubeconfig ("" keeps it).
	Kubeconfig string
	Extra      []string // more flags, last
	Env        []string
}

// Dir is the standby's own directory in the rig.
func (s Standby) Dir(rig *harness.Rig) string { return filepath.Join(rig.Dir, s.Name) }

// IPAMDatabase is the standby host's own IPAM database.
func (s Standby) IPAMDatabase(rig *harness.Rig) string { return filepath.Join(s.Dir(rig), "ipam.db") }

// MetricsAddress is where the standby serves /metrics and /controller in the rig.
func (s Standby) MetricsAddress() string { return fmt.Sprintf("127.0.0.1:%d", s.MetricsPort) }

// StartStandby starts the standby in the rig's network namespace.
func StartStandby(ctx context.Context, rig *harness.Rig, s Standby) (*harness.Process, error) {
	if s.Node == "" {
		s.Node = s.Name
	}
	dir := s.Dir(rig)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("standby directory: %w", err)
	}
	nb, kubeconfig := rig.NBEndpoint, rig.Kubeconfig
	if s.NBEndpoint != "" {
		nb = s.NBEndpoint
	}
	if s.Kubeconfig != "" {
		kubeconfig = s.Kubeconfig
	}
	args := append([]string{"run", "--config=/dev/null",
		"--node-name=" + s.Node, "--kubeconfig=" + kubeconfig}, DBFlags(nb, rig.SBEndpoint)...)
	args = append(args, "--ovs-db=unix:"+filepath.Join(dir, "no-ovs.sock"),
		"--ipam-db="+s.IPAMDatabase(rig), "--cni-socket="+filepath.Join(dir, "cni.sock"),
		"--cni-conf-dir="+filepath.Join(dir, "net.d"), "--cni-bin-dir="+filepath.Join(dir, "cnibin"),
		"--cni-binary="+filepath.Join(s.BinDir, "edgeovn-cni"),
		"--metrics-address="+s.MetricsAddress())
	return rig.Start(ctx, harness.ProcessSpec{Name: s.Name, Path: filepath.Join(s.BinDir, "edgeovn"),
		Args: append(args, s.Extra...), Env: s.Env})
}
