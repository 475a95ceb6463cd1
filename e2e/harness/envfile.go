package harness

import (
	"fmt"
	"os"
	"strings"
)

// envFile is a shell-sourceable summary of the rig, for people poking at a demo:
//
//	. <dir>/rig.env; ip netns exec $EOVN_NETNS ovn-nbctl --db=$EOVN_NB show
const envFile = "rig.env"

func (r *Rig) writeEnvFile() error {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"EOVN_DIR", r.Dir},
		{"EOVN_NETNS", r.Netns},
		{"EOVN_NODE_IP", r.NodeIP.String()},
		{"EOVN_NB", r.NBEndpoint},
		{"EOVN_SB", r.SBEndpoint},
		{"EOVN_OVS", r.OVSEndpoint},
		{"EOVN_KUBECONFIG", r.Kubeconfig},
		{"EOVN_POD_KUBECONFIG", r.PodKubeconfig},
		{"OVS_RUNDIR", r.Dir},
		{"OVN_RUNDIR", r.Dir},
	} {
		fmt.Fprintf(&b, "export %s=%q\n", kv[0], kv[1])
	}
	if err := os.WriteFile(r.path(envFile), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", r.path(envFile), err)
	}
	return nil
}
